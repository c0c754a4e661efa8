/**
 * Inbound posts and message sends have no NOTIFY of their own (src/jobs/boss.ts `wake`): the
 * process that committed the job wakes one of its own workers. A process without a worker of that
 * queue (one that only serves HTTP) announces the job on pg-boss's NOTIFY channel instead, so the
 * processes that run workers take it at once rather than on their next poll.
 */
import assert from "node:assert/strict";
import pg from "pg";
import { buildApp } from "../src/app.ts";
import { silentLogger } from "../src/shared/logger.ts";
import { Client, startTestApp, testConfig } from "./_helpers/app.ts";
import { eventually } from "./_helpers/receiver.ts";
import { createWhatsAppChannel, postSigned, textMessage } from "./_helpers/whatsapp.ts";

Deno.test("job wake-ups: an HTTP-only process announces its inbound jobs on pg-boss's channel", async () => {
  const ta = await startTestApp();
  const httpOnly = await buildApp(
    testConfig(ta.db.url),
    { logger: silentLogger, bootstrap: false, workers: false },
  );
  const listener = new pg.Client({ connectionString: ta.db.url });
  const heard: string[] = [];
  try {
    await listener.connect();
    const { rows } = await listener.query<{ channel: string }>(
      `SELECT 'pgboss_' || left(encode(sha224('pgboss'::bytea), 'hex'), 24) AS channel`,
    );
    listener.on("notification", (n) => {
      if (n.channel === rows[0].channel && n.payload) heard.push(n.payload);
    });
    await listener.query(`LISTEN ${rows[0].channel}`);

    const { owner } = await ta.seed.workspace();
    const agent = await ta.seed.agent(owner.client);
    const channel = await createWhatsAppChannel(owner.client, agent.id);
    // Accepted by the process with workers: woken in-process, nothing announced.
    const first = await postSigned(
      ta.anon,
      channel.id,
      textMessage(channel.phoneNumberId, "wamid.wake-1", "hi"),
    );
    assert.equal(first.status, 200);
    // Accepted by the HTTP-only process: announced, and the other process' worker stores it.
    const second = await postSigned(
      new Client(httpOnly),
      channel.id,
      textMessage(channel.phoneNumberId, "wamid.wake-2", "hello"),
    );
    assert.equal(second.status, 200);
    await eventually(() => Promise.resolve(heard.includes("whatsapp-inbound") || undefined));
    await eventually(async () => (await ta.app.deps.db.message.count()) === 2 || undefined);
    assert.deepEqual(heard.filter((q) => q === "whatsapp-inbound"), ["whatsapp-inbound"]);
  } finally {
    await listener.end();
    await httpOnly.stop();
    await ta.close();
  }
});
