-- A worker hands an update's replies straight to its own process's sender, which may send them
-- only if it already holds every older waiting row of the same chat. The commit statement
-- looks those rows up by chat with this index.
CREATE INDEX outbox_chat_pending ON outbox (bot_id, chat_id) WHERE status = 'pending';
