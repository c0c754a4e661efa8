/**
 * A correctly signed WhatsApp post is never refused for what it carries: whatever its shape, it is
 * answered 200, every message with a sender is stored (read into its type, or as OTHER with its raw
 * JSON as payload, and logged), and one odd message never costs its siblings. Unsigned or wrongly
 * signed posts stay 401 with nothing stored.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { startTestApp, type TestApp } from "./_helpers/app.ts";
import { assertProblem } from "./_helpers/problem.ts";
import { eventually } from "./_helpers/receiver.ts";
import { createLogger } from "../src/shared/logger.ts";
import { hubSignature } from "../src/channels/whatsapp/signature.ts";
import { APP_SECRET, createWhatsAppChannel, postSigned } from "./_helpers/whatsapp.ts";

type Json = Record<string, unknown>;

/** Until every whatsapp-inbound job queued so far has completed (each post answered 200 is one). */
async function settled(t: TestApp): Promise<void> {
  // The bound is for a loaded machine; it returns as soon as the jobs are done.
  await eventually(async () => {
    const [row] = await t.app.deps.db.$queryRawUnsafe<{ open: number }[]>(
      `SELECT count(*) FILTER (WHERE state <> 'completed')::int AS open FROM pgboss.job WHERE name = 'whatsapp-inbound'`,
    );
    return row.open === 0 ? true : undefined;
  }, 60_000);
}

function change(phone: string | null, value: Json, field: unknown = "messages"): Json {
  const metadata = phone === null
    ? {}
    : { metadata: { display_phone_number: "15550783881", phone_number_id: phone } };
  return { value: { messaging_product: "whatsapp", ...metadata, ...value }, field };
}
const post = (...changes: unknown[]) => ({
  object: "whatsapp_business_account",
  entry: [{ id: "102290129340398", changes }],
});
interface TextMessage extends Json {
  id: string;
  from: string | number | undefined;
  text: { body: string };
}
const text = (id: string, from: string, body: string): TextMessage => ({
  from,
  id,
  timestamp: "1749416383",
  type: "text",
  text: { body },
});
const contact = (waId: string, name: string) => ({ profile: { name }, wa_id: waId });

/** A stored message by its WhatsApp id, as the tests compare it. */
async function stored(t: TestApp, externalId: string) {
  return await t.app.deps.db.message.findFirst({
    where: { externalId },
    select: { type: true, content: true, payload: true, conversation: { select: { contact: true } } },
  });
}

Deno.test("signed WhatsApp posts of every odd shape: 200, the readable stored, the unreadable stored as OTHER", async (t) => {
  const lines: string[] = [];
  const ta = await startTestApp({}, { logger: createLogger("debug", (l) => lines.push(l)) });
  const db = ta.app.deps.db;
  try {
    const { owner } = await ta.seed.workspace();
    const agent = await ta.seed.agent(owner.client);
    const channel = await createWhatsAppChannel(owner.client, agent.id);
    const phone = channel.phoneNumberId;
    const anon = ta.anon;
    let n = 0;
    const uid = (label: string) => `wamid.${label}-${++n}`;
    /** Posts, asserts 200, waits for the stored result. */
    const send = async (payload: unknown) => {
      const res = await postSigned(anon, channel.id, payload);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      await settled(ta);
    };
    const assertText = async (id: string, body: string) => {
      const m = await stored(ta, id);
      assert.ok(m, `${id} stored`);
      assert.deepEqual([m.type, m.content], ["TEXT", body], id);
    };
    const assertOther = async (id: string, raw: unknown, content: string) => {
      const m = await stored(ta, id);
      assert.ok(m, `${id} stored`);
      assert.deepEqual([m.type, m.content], ["OTHER", content], id);
      assert.deepEqual(m.payload, raw, `${id}: its raw JSON as payload`);
    };

    await t.step(
      "an interactive message without its part, value.errors, and another customer's text",
      async () => {
        // Meta's shape for a message it could not deliver whole: the type, no part, an errors array.
        const broken = {
          from: "5511987654321",
          id: uid("interactive"),
          timestamp: "1718035521",
          type: "interactive",
          errors: [{
            code: 131051,
            title: "Message type unknown",
            message: "Message type unknown",
            error_data: { details: "Message type is currently not supported." },
          }],
        };
        const sibling = text(uid("sibling"), "5511912345678", "Is my order on its way?");
        await send(post(change(phone, {
          contacts: [contact("5511987654321", "Ana"), contact("5511912345678", "Bruno")],
          messages: [broken, sibling],
          errors: [{ code: 131000, title: "Something went wrong", message: "Something went wrong" }],
        })));
        await assertOther(broken.id, broken, "[interactive]");
        await assertText(sibling.id as string, "Is my order on its way?");
        assert.equal((await stored(ta, broken.id))!.conversation.contact.name, "Ana");
        const logged = lines.map((l) => JSON.parse(l)).find((l) => l.waMessageId === broken.id);
        assert.ok(logged, "the unreadable message is logged");
        assert.equal(logged.level, "warn");
        assert.equal(logged.channelId, channel.id);
        assert.match(logged.reason, /errors/);
      },
    );

    await t.step(
      "missing or malformed parts, unknown types, odd types: OTHER with the raw JSON",
      async () => {
        const cases: Array<[Json, string]> = [
          [{ type: "text" }, "[text]"],
          [{ type: "text", text: { body: 12 } }, "[text]"],
          [{ type: "text", text: "hello" }, "[text]"],
          [{ type: "image", image: { mime_type: "image/png" } }, "[image]"],
          [{ type: "audio", audio: null }, "[audio]"],
          [{ type: "document", document: [] }, "[document]"],
          [{ type: "location", location: { latitude: 91, longitude: 0 } }, "[location]"],
          [{ type: "button", button: { payload: "x" } }, "[button]"],
          [
            { type: "interactive", interactive: { type: "nfm_reply", nfm_reply: { response_json: "{}" } } },
            "[nfm_reply]",
          ],
          [{ type: "interactive", interactive: { type: 7 } }, "[interactive]"],
          [{ type: "hologram", hologram: { frames: 12 }, brand_new: { deep: [1, 2] } }, "[hologram]"],
          [
            { type: "unsupported", errors: [{ code: 131051, title: "Message type unknown" }] },
            "[unsupported]",
          ],
          [{ type: 5 }, "[unknown]"],
          [{}, "[unknown]"],
          [{ type: "Weird<Type>" }, "[unknown]"],
          [{ type: "text", text: { body: "fine" }, errors: [{ code: 1 }] }, "[text]"],
        ];
        const messages = cases.map(([m]) => ({
          from: "16505550001",
          id: uid("odd"),
          timestamp: "1749416383",
          ...m,
        }));
        const sibling = text(uid("sibling"), "16505550002", "still here");
        await send(post(change(phone, {
          contacts: [contact("16505550001", "Odd"), contact("16505550002", "Even")],
          messages: [...messages.slice(0, 7), sibling, ...messages.slice(7)],
        })));
        for (const [i, m] of messages.entries()) await assertOther(m.id, m, cases[i][1]);
        await assertText(sibling.id as string, "still here");
      },
    );

    await t.step("no id, no timestamp, a number for from, unstorable characters: still stored", async () => {
      const noId = { from: "16505550003", timestamp: "1749416383", type: "text", text: { body: "no id" } };
      const noTime = { ...text(uid("time"), "16505550003", "no time"), timestamp: "yesterday" };
      const numeric = { ...text(uid("numeric"), "0", "x"), from: 16505550004 };
      const nul = text(uid("nul"), "16505550003", "a\u0000b\ud800c");
      const longId = text("w".repeat(5000), "16505550003", "long id");
      const payload = post(change(phone, { messages: [noId, noTime, numeric, nul, longId] }));
      await send(payload);
      const noIdRows = await db.message.findMany({ where: { content: "no id" } });
      assert.equal(noIdRows.length, 1);
      assert.match(noIdRows[0].externalId!, /^sha256:[0-9a-f]{64}$/);
      await assertText(noTime.id as string, "no time");
      await assertText(numeric.id as string, "x");
      assert.equal((await stored(ta, numeric.id as string))!.conversation.contact.externalId, "16505550004");
      await assertText(nul.id as string, "a\uFFFDb\uFFFDc");
      assert.equal(await db.message.count({ where: { content: "long id" } }), 1);
      // Meta resends the same post: nothing is stored twice, the id-less message included.
      const before = await db.message.count();
      await send(payload);
      assert.equal(await db.message.count(), before);
    });

    await t.step("odd envelopes: each readable message stored, the rest skipped", async () => {
      const a = text(uid("env"), "16505550010", "one object as messages");
      const b = text(uid("env"), "16505550011", "beside a string value");
      const c = text(uid("env"), "16505550012", "no metadata");
      const d = text(uid("env"), "16505550013", "no field");
      const e = text(uid("env"), "16505550014", "beside a status soup");
      const f = text(uid("env"), "16505550015", "contacts not a list");
      const g = { ...text(uid("env"), "16505550016", "no from, one contact"), from: undefined };
      const h = text(uid("env"), "16505550017", "beside senderless");
      await send({
        object: "page",
        entry: [
          { id: "1", changes: [change(phone, { messages: a })] },
          {
            changes: [
              change(phone, { messages: "not a list" }),
              "junk",
              null,
              change(phone, { messages: [b] }),
            ],
          },
          {
            changes: [
              { value: "x", field: "messages" },
              { field: "messages" },
              change(null, { messages: [c] }),
            ],
          },
          { changes: [{ value: { metadata: { phone_number_id: phone }, messages: [d] } }] },
          {
            changes: [change(phone, { messages: [] }, "account_update"), change(phone, { messages: [] }, 42)],
          },
          {
            changes: [change(phone, {
              statuses: [null, 1, { id: "wamid.none" }, { status: "read" }, { id: "x", status: "deleted" }],
              errors: "not a list",
              messages: [e],
            })],
          },
          { changes: [change(phone, { contacts: "nope", messages: [f] })] },
          { changes: [change(phone, { contacts: [{ wa_id: "16505550016", profile: "x" }], messages: [g] })] },
          {
            changes: [change(phone, {
              contacts: [contact("1", "x"), contact("2", "y")],
              messages: [{ id: uid("senderless"), type: "text", text: { body: "?" } }, 7, h],
            })],
          },
          "not an entry",
          { changes: { not: "a list" } },
        ],
      });
      for (const m of [a, b, c, d, e, f]) await assertText(m.id as string, (m.text as Json).body as string);
      await assertText(g.id as string, "no from, one contact");
      assert.equal((await stored(ta, g.id as string))!.conversation.contact.externalId, "16505550016");
      await assertText(h.id as string, "beside senderless");
      assert.equal(await db.message.count({ where: { content: "?" } }), 0, "no sender: not stored");
      assert.ok(
        lines.some((l) => l.includes('"level":"warn"') && l.includes("no readable sender")),
        "the senderless message is logged",
      );
    });

    await t.step("thousands of entries and changes: 200, all stored", async () => {
      const statuses = Array.from({ length: 20 }, (_, i) => ({
        id: `wamid.out-${i}`,
        status: "delivered",
        timestamp: "1749416383",
      }));
      const messages = Array.from({ length: 50 }, (_, i) => text(`wamid.bulk-${i}`, "16505550020", `m${i}`));
      const empty = {
        changes: [{ field: "messages", value: {} }, { field: "messages", value: { messages: [] } }],
      };
      await send({
        object: "whatsapp_business_account",
        entry: [
          ...Array.from({ length: 5000 }, () => empty),
          ...statuses.map((s) => ({ id: "1", changes: [change(phone, { statuses: [s] })] })),
          { id: "1", changes: [change(phone, { messages })] },
        ],
      });
      assert.equal(await db.message.count({ where: { externalId: { startsWith: "wamid.bulk-" } } }), 50);
    });

    await t.step(
      "bodies that are not a WhatsApp payload, or not JSON at all: 200, nothing stored",
      async () => {
        const before = await db.message.count();
        const bodies: Array<string | Uint8Array> = [
          "{not json",
          "",
          "null",
          "[]",
          '"text"',
          "42",
          '{"object":"whatsapp_business_account"}',
          '{"entry":[{"changes":"x"}]}',
          new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]),
          "[".repeat(20_000) + "]".repeat(20_000),
        ];
        for (const body of bodies) {
          const res = await anon.post(`/webhooks/whatsapp/${channel.id}`, body, {
            "content-type": "application/json",
            "x-hub-signature-256": hubSignature(body, APP_SECRET),
          });
          assert.equal(res.status, 200, `${String(body).slice(0, 40)}: ${JSON.stringify(res.body)}`);
        }
        await settled(ta);
        assert.equal(await db.message.count(), before);
      },
    );

    await t.step("a signed non-UTF-8 body still has its messages stored", async () => {
      const m = text(uid("latin1"), "16505550030", "ol\u00e1");
      const json = JSON.stringify(post(change(phone, { messages: [m] })));
      // The same text with a stray byte beside the body: not valid UTF-8.
      const bytes = new TextEncoder().encode(json.replace("ol\u00e1", "ol\u00e1 \u0001"));
      bytes[bytes.indexOf(0x01)] = 0xff; // JSON strings may not hold raw control characters; 0xff is not UTF-8
      const res = await anon.post(`/webhooks/whatsapp/${channel.id}`, bytes, {
        "content-type": "application/json",
        "x-hub-signature-256": hubSignature(bytes, APP_SECRET),
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      await settled(ta);
      await assertText(m.id as string, "ol\u00e1 \uFFFD");
    });

    await t.step("unsigned or wrongly signed, whatever the body: 401, nothing stored or queued", async () => {
      const before = await db.message.count();
      const jobs = await db.$queryRawUnsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM pgboss.job`);
      const bodies: unknown[] = [
        post(change(phone, { messages: [{ from: "1", id: uid("unsigned"), type: "interactive" }] })),
        post(change(phone, { messages: [text(uid("unsigned"), "1", "hi")] })),
        "{not json",
      ];
      for (const body of bodies) {
        assertProblem(await postSigned(anon, channel.id, body, null), 401, "UNAUTHENTICATED");
        assertProblem(await postSigned(anon, channel.id, body, "another-secret"), 401, "UNAUTHENTICATED");
      }
      assert.equal(await db.message.count(), before);
      const after = await db.$queryRawUnsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM pgboss.job`);
      assert.equal(after[0].n, jobs[0].n);
    });

    await t.step(
      "property: any junk in a message's fields never costs a sibling; each is stored once",
      async () => {
        let run = 0;
        await fc.assert(
          fc.asyncProperty(
            fc.array(
              fc.record({
                key: fc.constantFrom(
                  "type",
                  "text",
                  "timestamp",
                  "context",
                  "errors",
                  "image",
                  "interactive",
                ),
                junk: fc.jsonValue({ maxDepth: 3 }),
                broken: fc.boolean(),
              }),
              { minLength: 1, maxLength: 4 },
            ),
            async (specs) => {
              run++;
              const messages = specs.map((s, i) => {
                const m: Json = text(`wamid.prop-${run}-${i}`, `1650556${run}${i}`, `prop ${run} ${i}`);
                if (s.broken) m[s.key] = s.junk;
                return m;
              });
              await send(post(change(phone, {
                contacts: messages.map((m) => contact(m.from as string, "P")),
                messages,
              })));
              for (const m of messages) {
                const row = await stored(ta, m.id as string);
                assert.ok(row, `${m.id} stored`);
                const body = (m.text as Json | null)?.body;
                const readable = m.type === "text" && typeof body === "string" &&
                  !(Array.isArray(m.errors) && m.errors.length > 0);
                if (readable) assert.deepEqual([row.type, row.content], ["TEXT", body]);
                else {
                  assert.equal(row.type, "OTHER");
                  // The raw JSON as jsonb gives it back (JSON's own reading of -0 and big numbers).
                  assert.deepEqual(row.payload, JSON.parse(JSON.stringify(m)));
                }
              }
            },
          ),
          { numRuns: 40 },
        );
      },
    );
  } finally {
    await ta.close();
  }
});
