-- A product in both languages: the Persian title and description beside the English ones.
-- Both are optional; an advertiser reads their own language's, or the other where it is empty.

ALTER TABLE shop_products
    ADD COLUMN title_fa       text NOT NULL DEFAULT '' CHECK (length(title_fa) <= 100),
    ADD COLUMN description_fa text NOT NULL DEFAULT '' CHECK (length(description_fa) <= 1000);
