-- An outbound message's status or error is announced on the live channel (src/live/hub.ts) in the
-- transaction that changes it, whichever statement changes it: a send's outcome, a pacing refusal,
-- a status webhook, the stale-send sweep, the recovery of a dead sender's claims. The payload is a
-- live event like the event bus' (ids only), of the live-only type `message.updated`; webhooks never
-- see it. The conversation gives the workspace and agent the hub and the feeds route by.
CREATE FUNCTION "live_message_updated"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- One statement (the lookup and the notification together): it runs once per change.
  PERFORM pg_notify('switchboard_live', json_build_object(
      'id', gen_random_uuid()::text, 'type', 'message.updated', 'workspaceId', c."workspaceId",
      'agentId', c."agentId", 'conversationId', NEW."conversationId", 'messageId', NEW.id,
      'approvalId', NULL)::text)
    FROM "Conversation" c WHERE c.id = NEW."conversationId";
  RETURN NULL;
END
$$;

-- Only a change of the columns a message's delivery state shows (a claim, the wamid or the pricing
-- alone announce nothing).
CREATE TRIGGER "Message_live_updated"
  AFTER UPDATE OF status, error ON "Message"
  FOR EACH ROW
  WHEN (NEW.direction = 'OUTBOUND'
        AND (OLD.status IS DISTINCT FROM NEW.status OR OLD.error IS DISTINCT FROM NEW.error))
  EXECUTE FUNCTION "live_message_updated"();
