-- Meta's 131047 (re-engagement) closes a WhatsApp conversation's window until the customer writes again.
ALTER TABLE "Conversation" ADD COLUMN "windowClosedAt" TIMESTAMPTZ(3);
