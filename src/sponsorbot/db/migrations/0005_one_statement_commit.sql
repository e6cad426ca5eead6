-- The worker commits a handler's independent writes and the update's done mark in one
-- statement. If the update was taken over by another worker meanwhile, that statement calls
-- this to fail, so the writes that ran beside the mark roll back with it.
CREATE FUNCTION sponsorbot_claim_lost() RETURNS integer
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the update was taken over by another worker' USING ERRCODE = 'SB001';
END
$$;
