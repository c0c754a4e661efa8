-- Live feeds keep each subscriber's credential current from these announcements instead of reading
-- every credential again for each event (src/live/credentials.ts). A change to a session, a
-- membership or an API token is NOTIFYed in the transaction that makes it, whichever code (or
-- cascade) makes it, so it reaches every server's LISTEN connection in commit order with the live
-- events. The payload names what changed, as the server indexes its credentials:
-- `session:<id>`, `member:<workspaceId>:<userId>`, `token:<id>`.
CREATE FUNCTION "live_credential_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'Session' THEN
    PERFORM pg_notify('switchboard_live_credentials', 'session:' || OLD."id");
  ELSIF TG_TABLE_NAME = 'Membership' THEN
    PERFORM pg_notify('switchboard_live_credentials', 'member:' || OLD."workspaceId" || ':' || OLD."userId");
  ELSE
    PERFORM pg_notify('switchboard_live_credentials', 'token:' || OLD."id");
  END IF;
  RETURN NULL;
END
$$;

-- Only the columns a credential's standing depends on (an API token's lastUsedAt is written often).
CREATE TRIGGER "Session_live_credential_changed"
  AFTER UPDATE OF "revokedAt", "expiresAt", "userId" OR DELETE ON "Session"
  FOR EACH ROW EXECUTE FUNCTION "live_credential_changed"();

CREATE TRIGGER "Membership_live_credential_changed"
  AFTER UPDATE OF "role", "workspaceId", "userId" OR DELETE ON "Membership"
  FOR EACH ROW EXECUTE FUNCTION "live_credential_changed"();

CREATE TRIGGER "ApiToken_live_credential_changed"
  AFTER UPDATE OF "revokedAt", "workspaceId" OR DELETE ON "ApiToken"
  FOR EACH ROW EXECUTE FUNCTION "live_credential_changed"();
