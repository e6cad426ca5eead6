-- A bot may delete its messages only within 48 hours (the security review, M12): content set
-- to vanish later than that would stay in the visitor's chat. Items set beyond the new limit
-- of 47 hours are brought down to it.
UPDATE contents SET auto_delete_s = 47 * 3600 WHERE auto_delete_s > 47 * 3600;
