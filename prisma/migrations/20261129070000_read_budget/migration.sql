-- The read planner's cut-off (src/reads/plan.ts): a read statement counts a lower bound of its
-- answer's bytes as it builds each row, and stops through this function once past the request's
-- budget, instead of building the whole answer first. SQLSTATE 54SB1: class 54, program limit
-- exceeded, with a code of our own that src/reads/budget.ts recognises.
CREATE FUNCTION "switchboard_read_over_budget"(spent bigint) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'read answer over its byte budget (% bytes counted so far)', spent
    USING ERRCODE = '54SB1';
END
$$;
