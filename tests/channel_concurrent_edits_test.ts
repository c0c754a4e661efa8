/**
 * Concurrent edits of one channel take turns instead of failing: 25 PATCHes at once all answer 200
 * and the channel ends as one of them left it (label and secret of the same PATCH), with keys that
 * other PATCHes changed merged in, never lost.
 */
import assert from "node:assert/strict";
import { startTestApp } from "./_helpers/app.ts";
import { createWhatsAppChannel } from "./_helpers/whatsapp.ts";
import { openSecrets } from "../src/channels/whatsapp_config.ts";

const EDITS = 25;

Deno.test("25 concurrent PATCHes of one channel: all 200, the final state is one of them", async () => {
  const ta = await startTestApp();
  try {
    const { owner } = await ta.seed.workspace();
    const agent = await ta.seed.agent(owner.client);
    const channel = await createWhatsAppChannel(owner.client, agent.id);
    const path = `/api/agents/${agent.id}/channels/${channel.id}`;
    const answers = await Promise.all(
      Array.from(
        { length: EDITS },
        (_, i) => owner.client.patch(path, { label: `label-${i}`, config: { verifyToken: `verify-${i}` } }),
      ),
    );
    assert.deepEqual(
      answers.map((a) => a.status),
      Array(EDITS).fill(200),
      JSON.stringify(answers.find((a) => a.status !== 200)?.body),
    );
    for (const [i, a] of answers.entries()) assert.equal(a.body.label, `label-${i}`);
    const row = await ta.app.deps.db.channel.findUniqueOrThrow({ where: { id: channel.id } });
    const k = Number(row.label.replace("label-", ""));
    assert.ok(Number.isInteger(k) && k >= 0 && k < EDITS, row.label);
    const secrets = openSecrets(ta.app.deps, row.credentials!);
    // The label and the secret come from the same PATCH: the edits did not interleave.
    assert.equal(secrets.verifyToken, `verify-${k}`);
    // Keys no PATCH named are kept.
    assert.equal(secrets.appSecret, "test-app-secret-0123456789");
    assert.equal(secrets.accessToken, "test-access-token");

    // Different keys at once: every one of them lands.
    const keys = ["accessToken", "appSecret", "verifyToken"] as const;
    const mixed = await Promise.all(
      Array.from(
        { length: EDITS },
        (_, i) => owner.client.patch(path, { config: { [keys[i % 3]]: `${keys[i % 3]}-${i}` } }),
      ),
    );
    assert.deepEqual(mixed.map((a) => a.status), Array(EDITS).fill(200));
    const after = openSecrets(
      ta.app.deps,
      (await ta.app.deps.db.channel.findUniqueOrThrow({ where: { id: channel.id } })).credentials!,
    );
    for (const key of keys) {
      assert.match(after[key]!, new RegExp(`^${key}-\\d+$`), key);
      assert.equal(Number(after[key]!.split("-")[1]) % 3, keys.indexOf(key));
    }
  } finally {
    await ta.close();
  }
});
