/**
 * Media messages understood (docs/behaviour.md "Media"): signed WhatsApp posts with voice notes,
 * images and documents, against stand-ins on 127.0.0.1 for the Graph media endpoints, the
 * transcription endpoint (which refuses `.oga` like the real one) and the model (recording image
 * parts). The reply waits for the media work; intents fire on what was understood; failures keep a
 * readable `media.error` and the customer is still answered; reads, events and the media endpoint
 * show it all. Waits are on the stand-ins' calls and the stored state, never on sleeps.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { RECEIVER_ALLOWLIST, Seed, startTestApp, TEST_SECRETS_KEY, type TestApp } from "./_helpers/app.ts";
import { createWhatsAppChannel, customerMessage, postSigned, textMessage } from "./_helpers/whatsapp.ts";
import { startReceiver } from "./_helpers/receiver.ts";
import { waitUntil } from "./_helpers/conversations.ts";
import { assertProblem } from "./_helpers/problem.ts";
import {
  type AiStandin,
  imageParts,
  makeDocx,
  makePdf,
  type MediaGraph,
  startAi,
  startMediaGraph,
  userText,
} from "./_helpers/media.ts";
import { createTestDatabase } from "./_helpers/db.ts";
import { buildApp } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { silentLogger } from "../src/shared/logger.ts";
import { processInbound } from "../src/channels/whatsapp/process.ts";
import { transcriptionFileName } from "../src/media/transcription.ts";
import { cleanMimeType, UNKNOWN_MIME_TYPE } from "../src/shared/mime_type.ts";
import { LINK_SLOT_SECONDS, linkExpiry, signedMediaPath } from "../src/media/links.ts";

const bytes = (s: string) => new TextEncoder().encode(s);
const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
const PDF = "application/pdf";
const DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";

/** The model: an intent's tag when its tag is offered and the customer gave an order number; else an echo. */
// deno-lint-ignore no-explicit-any
function modelAnswer(body: any): string {
  const system: string = body.messages[0].content;
  const said = userText(body);
  const order = /pedido (\d+)/i.exec(said)?.[1];
  for (const tag of ["pedido-por-voz", "pedido-por-imagem", "pedido-por-documento"]) {
    if (order && system.includes(`<${tag} `)) return `Certo! <${tag} numero="${order}"/>`;
  }
  return `eco: ${said}`;
}

interface Setup {
  t: TestApp;
  graph: MediaGraph;
  ai: AiStandin;
  intents: ReturnType<typeof startReceiver>;
  workspaceId: string;
  // deno-lint-ignore no-explicit-any
  owner: any;
  /** Channels of the vision agent and of the agent without vision. */
  vision: { id: string; phoneNumberId: string; agentId: string };
  blind: { id: string; phoneNumberId: string; agentId: string };
  close(): Promise<void>;
}

async function setup(env: Record<string, string> = {}): Promise<Setup> {
  const graph = startMediaGraph();
  const ai = startAi(modelAnswer);
  const intents = startReceiver((call) =>
    Response.json({ message: `Pedido ${JSON.parse(call.body).fields.numero} registrado.` })
  );
  const t = await startTestApp({
    OPENAI_API_KEY: "sk-test",
    OPENAI_BASE_URL: ai.baseUrl,
    WHATSAPP_GRAPH_URL: graph.url,
    GROUPING_FAST_MS: "300",
    TRANSCRIPTION_MODEL: "gpt-4o-transcribe",
    MEDIA_WAIT_MS: "30000",
    MEDIA_MAX_AUDIO_BYTES: "1000",
    ...env,
  });
  const { workspaceId, owner } = await t.seed.workspace();
  const c = owner.client;
  const make = async (enabledVision: boolean) => {
    const agent = await t.seed.agent(c, { messageGroupingTime: "FAST", enabledVision, splitMessages: false });
    for (
      const [name, type] of [
        ["pedido por voz", "AUDIO"],
        ["pedido por imagem", "IMAGE"],
        ["pedido por documento", "DOCUMENT"],
        ["so texto", "TEXT"],
      ]
    ) {
      const res = await c.post(`/api/agents/${agent.id}/intents`, {
        name,
        description: `um pedido (${type})`,
        triggerOnTypes: [type],
        requiredFields: [{ name: "numero", type: "string", description: "o número do pedido" }],
        webhookUrl: intents.url("/intent"),
      });
      assert.equal(res.status, 201, JSON.stringify(res.body));
    }
    const channel = await createWhatsAppChannel(c, agent.id);
    return { id: channel.id, phoneNumberId: channel.phoneNumberId, agentId: agent.id as string };
  };
  const vision = await make(true);
  const blind = await make(false);
  return {
    t,
    graph,
    ai,
    intents,
    workspaceId,
    owner,
    vision,
    blind,
    async close() {
      await t.close();
      await graph.close();
      await ai.close();
      await intents.close();
    },
  };
}

let n = 0;
/** A customer (its own conversation) sends WhatsApp `kind` with `part` to `channel`; the message's wamid. */
async function post(s: Setup, channel: Setup["vision"], kind: string, part: unknown, from: string) {
  const waId = `wamid.media-${++n}`;
  const res = await postSigned(
    s.t.anon,
    channel.id,
    customerMessage(channel.phoneNumberId, waId, kind, part, from),
  );
  assert.equal(res.status, 200);
  return waId;
}

/**
 * A customer's voice note: media `id`, whose file is the bytes of `audio` and which the transcription
 * stand-in hears as `said`; its wamid and the file's size.
 */
async function sendVoiceNote(
  s: Setup,
  note: { id: string; audio: string; said: string; from: string; mimeType: string; voice?: boolean },
) {
  const audio = bytes(note.audio);
  s.graph.files.set(note.id, { bytes: audio, mimeType: note.mimeType });
  s.ai.transcripts.set(note.audio, note.said);
  const part = {
    mime_type: note.mimeType,
    sha256: sha(audio),
    id: note.id,
    ...(note.voice ? { voice: true } : {}),
  };
  return { waId: await post(s, s.vision, "audio", part, note.from), size: audio.length };
}

async function stored(s: Setup, waId: string) {
  const m = await waitUntil(
    () => s.t.app.deps.db.message.findFirst({ where: { externalId: waId } }),
    (m) => m !== null && !m.mediaPending,
  );
  return m!;
}

/** The sends to `to`, their texts. */
const sentTo = (s: Setup, to: string) =>
  s.graph.sends.filter((b) => b.to === to).map((b) => b.text.body as string);

Deno.test("transcription file names carry an extension the endpoint accepts", () => {
  assert.equal(transcriptionFileName("audio/ogg; codecs=opus"), "voice-note.ogg");
  assert.equal(transcriptionFileName("audio/mpeg"), "voice-note.mp3");
  assert.equal(transcriptionFileName("audio/mp4"), "voice-note.m4a");
  assert.equal(transcriptionFileName("audio/aac"), "voice-note.m4a");
  assert.equal(transcriptionFileName(null), "voice-note.ogg");
});

Deno.test("media types from outside are cleaned: parsed liberally, sent exactly", () => {
  assert.equal(cleanMimeType("audio/ogg; codecs=opus"), "audio/ogg; codecs=opus");
  assert.equal(cleanMimeType(' Image/JPEG ;Charset="UTF-8"; name=a.jpg'), "image/jpeg; charset=UTF-8");
  assert.equal(
    cleanMimeType('video/mp4; codecs="avc1.42E01E, mp4a.40.2"'),
    'video/mp4; codecs="avc1.42E01E, mp4a.40.2"',
  );
  assert.equal(cleanMimeType("image/png\r\nX-Injected: 1"), UNKNOWN_MIME_TYPE);
  assert.equal(cleanMimeType("image/png\r\n"), "image/png");
  assert.equal(cleanMimeType("not a type"), UNKNOWN_MIME_TYPE);
  assert.equal(cleanMimeType(`audio/ogg; codecs="op\u00e9us"`), "audio/ogg");
  assert.equal(cleanMimeType(""), UNKNOWN_MIME_TYPE);
  assert.equal(cleanMimeType(null), null);
});

Deno.test("media messages: voice notes, images, documents, failures and reads", async (t) => {
  const s = await setup();
  const db = s.t.app.deps.db;
  try {
    await t.step(
      "a voice note alone, transcribed late, is answered from its transcript; its AUDIO intent fires",
      async () => {
        let release!: () => void;
        s.ai.gate = new Promise((r) => release = r);
        const from = "5511900000001";
        const { waId, size } = await sendVoiceNote(s, {
          id: "audio-1",
          audio: "voice-1",
          said: "quero o pedido 4521 por favor",
          from,
          mimeType: "audio/ogg; codecs=opus",
          voice: true,
        });
        await s.ai.waitForTranscriptions(1);
        // The window closes while the transcription is under way: nothing is asked. Its reply job
        // is only the backstop, due when MEDIA_WAIT_MS would run out; the media job starts the reply.
        const [{ conversationId }] = await waitUntil(
          () =>
            db.$queryRawUnsafe<Array<{ conversationId: string; closed: boolean }>>(
              `SELECT c.id AS "conversationId", c."replyDueAt" <= now() AS closed
                 FROM "Conversation" c JOIN "Contact" ct ON ct.id = c."contactId" WHERE ct."externalId" = $1`,
              from,
            ),
          (rows) => rows.length === 1 && rows[0].closed,
        );
        const replyJobs = await db.$queryRawUnsafe<Array<{ state: string; afterWindowMs: number }>>(
          `SELECT j.state::text AS state,
                  (extract(epoch FROM j.start_after - c."replyDueAt") * 1000)::int AS "afterWindowMs"
             FROM pgboss.job j JOIN "Conversation" c ON c.id = j.data->>'conversationId'
            WHERE j.name = 'conversation-reply' AND c.id = $1`,
          conversationId,
        );
        assert.equal(replyJobs.length, 1, "one reply job, not run at the window's close");
        assert.equal(replyJobs[0].state, "created");
        assert.ok(
          replyJobs[0].afterWindowMs >= 30_000,
          `due ${replyJobs[0].afterWindowMs} ms after the window`,
        );
        assert.equal(s.ai.chats.length, 0, "no model call before the transcript");
        s.ai.gate = null;
        release();
        await s.graph.waitForSends(1);
        assert.deepEqual(s.ai.transcriptions[0], {
          fileName: "voice-note.ogg",
          model: "gpt-4o-transcribe",
          mimeType: "audio/ogg",
          size,
        });
        assert.equal(s.ai.chats.length, 1);
        assert.equal(userText(s.ai.chats[0]), "[audio] quero o pedido 4521 por favor");
        const system: string = s.ai.chats[0].messages[0].content;
        assert.ok(system.includes("<pedido-por-voz "), "the AUDIO intent is offered");
        assert.ok(!system.includes("<so-texto "), "a TEXT-only intent is not");
        assert.ok(!system.includes("<pedido-por-imagem "), "nor an IMAGE one");
        assert.equal(s.intents.calls.length, 1);
        const call = JSON.parse(s.intents.calls[0].body);
        assert.equal(call.intentName, "pedido por voz");
        assert.deepEqual(call.fields, { numero: "4521" });
        assert.equal(call.context.contactId, from);
        assert.deepEqual(sentTo(s, from), ["Certo! Pedido 4521 registrado."]);
        // The Graph calls: the description and the file, each with the channel's token.
        const media = s.graph.calls.filter((c) => c.method === "GET");
        assert.deepEqual(media.map((c) => c.path), ["/audio-1", "/download/audio-1"]);
        assert.ok(media.every((c) => c.authorization === "Bearer test-access-token"));

        const m = await stored(s, waId);
        assert.equal(m.transcript, "quero o pedido 4521 por favor");
        assert.equal(m.mediaError, null);
        assert.equal(m.mediaSize, size);
        assert.equal(m.content, "[audio]");
        const event = await db.domainEvent.findFirstOrThrow({
          where: { type: "message.received", conversationId: m.conversationId },
        });
        // deno-lint-ignore no-explicit-any
        assert.deepEqual((event.payload as any).data.message, {
          id: m.id,
          type: "AUDIO",
          content: "[audio]",
          createdAt: m.createdAt.toISOString(),
          media: {
            id: "audio-1",
            mimeType: "audio/ogg; codecs=opus",
            size,
            fileName: null,
            error: null,
          },
          transcript: "quero o pedido 4521 por favor",
          text: null,
        });
        assert.equal(
          await db.domainEvent.count({
            where: { type: "message.received", conversationId: m.conversationId },
          }),
          1,
          "one message.received, after the media work",
        );
      },
    );

    await t.step("a voice note and a text in one window get one reply that saw both", async () => {
      const audio = bytes("voice-2");
      s.graph.files.set("audio-2", { bytes: audio, mimeType: "audio/ogg" });
      s.ai.transcripts.set("voice-2", "oi, tudo bem?");
      const from = "5511900000002";
      const chatsBefore = s.ai.chats.length;
      const voice = await post(s, s.vision, "audio", {
        mime_type: "audio/ogg",
        sha256: sha(audio),
        id: "audio-2",
      }, from);
      // The customer sent the voice note first: the text is posted once it is stored (two posts are
      // stored by concurrent jobs, in either order).
      await waitUntil(
        () => s.t.app.deps.db.message.findFirst({ where: { externalId: voice } }),
        (m) => m !== null,
      );
      const res = await postSigned(
        s.t.anon,
        s.vision.id,
        textMessage(s.vision.phoneNumberId, `wamid.text-${++n}`, "e o horário?", from),
      );
      assert.equal(res.status, 200);
      await waitUntil(() => Promise.resolve(sentTo(s, from)), (sent) => sent.length >= 1);
      assert.equal(s.ai.chats.length, chatsBefore + 1, "one model call");
      assert.equal(userText(s.ai.chats.at(-1)), "[audio] oi, tudo bem?\ne o horário?");
      assert.deepEqual(sentTo(s, from), ["eco: [audio] oi, tudo bem?\ne o horário?"]);
    });

    await t.step(
      "an image with vision on reaches the model as an image part with its caption; IMAGE intents fire",
      async () => {
        const image = bytes("\x89PNG fake image bytes");
        s.graph.files.set("image-1", { bytes: image, mimeType: "image/png" });
        const from = "5511900000003";
        const waId = await post(s, s.vision, "image", {
          caption: "segue o pedido 7788",
          mime_type: "image/png",
          sha256: sha(image),
          id: "image-1",
        }, from);
        await waitUntil(() => Promise.resolve(sentTo(s, from)), (sent) => sent.length >= 1);
        const chat = s.ai.chats.at(-1);
        assert.deepEqual(imageParts(chat), [`data:image/png;base64,${btoa(String.fromCharCode(...image))}`]);
        assert.equal(userText(chat), "[image] segue o pedido 7788");
        assert.ok(chat.messages[0].content.includes("<pedido-por-imagem "));
        assert.deepEqual(sentTo(s, from), ["Certo! Pedido 7788 registrado."]);
        const m = await stored(s, waId);
        assert.equal(m.mediaError, null);
        // Dropped with the reply's release, which comes right after its send.
        await waitUntil(
          () => db.messageMediaBytes.count({ where: { messageId: m.id } }),
          (kept) => kept === 0,
        );
      },
    );

    await t.step("an image with vision off: the caption only, no download, no IMAGE intent", async () => {
      const image = bytes("another image");
      s.graph.files.set("image-2", { bytes: image, mimeType: "image/jpeg" });
      const from = "5511900000004";
      await post(
        s,
        s.blind,
        "image",
        { caption: "pedido 9911", mime_type: "image/jpeg", id: "image-2" },
        from,
      );
      await waitUntil(() => Promise.resolve(sentTo(s, from)), (sent) => sent.length >= 1);
      const chat = s.ai.chats.at(-1);
      assert.deepEqual(imageParts(chat), []);
      assert.equal(chat.messages.at(-1).content, "[image] pedido 9911");
      assert.ok(!chat.messages[0].content.includes("<pedido-por-imagem "));
      assert.deepEqual(sentTo(s, from), ["eco: [image] pedido 9911"]);
      assert.ok(!s.graph.calls.some((c) => c.path === "/download/image-2"), "not downloaded");
    });

    await t.step("a PDF's text reaches the model and fires its DOCUMENT intent", async () => {
      const pdf = makePdf("Pedido 4522 de 3 cadeiras");
      s.graph.files.set("pdf-1", { bytes: pdf, mimeType: PDF });
      const from = "5511900000005";
      const waId = await post(s, s.vision, "document", {
        filename: "pedido.pdf",
        caption: "meu pedido",
        mime_type: PDF,
        sha256: sha(pdf),
        id: "pdf-1",
      }, from);
      await waitUntil(() => Promise.resolve(sentTo(s, from)), (sent) => sent.length >= 1);
      const m = await stored(s, waId);
      assert.equal(m.mediaError, null);
      assert.match(m.text ?? "", /Pedido 4522 de 3 cadeiras/);
      assert.match(
        userText(s.ai.chats.at(-1)),
        /^\[document\] pedido\.pdf meu pedido\n.*Pedido 4522 de 3 cadeiras/s,
      );
      assert.deepEqual(sentTo(s, from), ["Certo! Pedido 4522 registrado."]);
    });

    await t.step("a DOCX's text reaches the model", async () => {
      const docx = makeDocx("Pedido 4523 urgente");
      s.graph.files.set("docx-1", { bytes: docx, mimeType: DOCX });
      const from = "5511900000006";
      const waId = await post(s, s.vision, "document", {
        filename: "pedido.docx",
        mime_type: DOCX,
        sha256: sha(docx),
        id: "docx-1",
      }, from);
      await waitUntil(() => Promise.resolve(sentTo(s, from)), (sent) => sent.length >= 1);
      const m = await stored(s, waId);
      assert.match(m.text ?? "", /Pedido 4523 urgente/);
      assert.deepEqual(sentTo(s, from), ["Certo! Pedido 4523 registrado."]);
    });

    await t.step(
      "failures: missing media, Graph errors, oversize, transcription error; the customer is answered",
      async () => {
        const cases: Array<{ from: string; id: string; setup: () => void; error: string; gets: string[] }> = [
          {
            from: "5511900000010",
            id: "audio-missing",
            setup: () => {},
            error: "the media is no longer on WhatsApp (HTTP 404)",
            gets: ["/audio-missing"],
          },
          {
            from: "5511900000011",
            id: "audio-big",
            setup: () =>
              s.graph.files.set("audio-big", { bytes: bytes("x"), mimeType: "audio/ogg", claimedSize: 5000 }),
            error: "the file is over the limit of 1000 bytes (5000 bytes)",
            gets: ["/audio-big"],
          },
          {
            from: "5511900000012",
            id: "audio-deaf",
            setup: () => {
              s.graph.files.set("audio-deaf", { bytes: bytes("voice-deaf"), mimeType: "audio/ogg" });
              s.ai.failWith = 500;
            },
            error: "not transcribed: HTTP 500: transcription backend down",
            gets: ["/audio-deaf", "/download/audio-deaf"],
          },
        ];
        for (const c of cases) {
          c.setup();
          const waId = await post(s, s.vision, "audio", { mime_type: "audio/ogg", id: c.id }, c.from);
          await waitUntil(() => Promise.resolve(sentTo(s, c.from)), (sent) => sent.length >= 1);
          s.ai.failWith = null;
          const m = await stored(s, waId);
          assert.equal(m.mediaError, c.error, c.id);
          assert.equal(m.transcript, null);
          assert.deepEqual(sentTo(s, c.from), ["eco: [audio: not transcribed]"], c.id);
          assert.deepEqual(
            s.graph.calls.filter((g) => g.path.endsWith(c.id)).map((g) => g.path),
            c.gets,
            c.id,
          );
        }
      },
    );

    await t.step(
      "a Graph 500 is tried again (3 attempts, 1 s then 4 s apart) and then succeeds",
      async () => {
        const audio = bytes("voice-retry");
        s.graph.files.set("audio-retry", { bytes: audio, mimeType: "audio/ogg", failFirst: [500, 503] });
        s.ai.transcripts.set("voice-retry", "agora sim");
        const from = "5511900000013";
        const waId = await post(s, s.vision, "audio", { mime_type: "audio/ogg", id: "audio-retry" }, from);
        await waitUntil(() => Promise.resolve(sentTo(s, from)), (sent) => sent.length >= 1, 30_000);
        const m = await stored(s, waId);
        assert.equal(m.transcript, "agora sim");
        assert.equal(s.graph.calls.filter((g) => g.path === "/audio-retry").length, 3);
        assert.deepEqual(sentTo(s, from), ["eco: [audio] agora sim"]);
      },
    );

    await t.step("reads: REST, GraphQL and the media endpoint", async () => {
      const c = s.owner.client;
      const m = await db.message.findFirstOrThrow({ where: { mediaId: "audio-1" } });
      const rest = await c.get(`/api/conversations/${m.conversationId}/messages`);
      assert.equal(rest.status, 200);
      // deno-lint-ignore no-explicit-any
      const row = rest.body.data.find((r: any) => r.id === m.id);
      assert.deepEqual(row.media, {
        id: "audio-1",
        url: `/api/messages/${m.id}/media`,
        mimeType: "audio/ogg; codecs=opus",
        size: 7,
        fileName: null,
        error: null,
      });
      assert.equal(row.transcript, "quero o pedido 4521 por favor");
      assert.equal(row.text, null);
      const gql = await c.graphql(
        `query($id: ID!) { conversation(id: $id) { messages(first: 10) { edges { node {
          id type transcript text media { id url mimeType size fileName error } } } } } }`,
        { id: m.conversationId },
      );
      assert.equal(gql.body.errors, undefined, JSON.stringify(gql.body.errors));
      const node = gql.body.data.conversation.messages.edges[0].node;
      assert.deepEqual(node, {
        id: m.id,
        type: "AUDIO",
        transcript: "quero o pedido 4521 por favor",
        text: null,
        media: row.media,
      });

      const viewer = await s.t.seed.member(s.workspaceId, "VIEWER");
      const file = await viewer.client.request("GET", `/api/messages/${m.id}/media`);
      assert.equal(file.status, 200);
      assert.equal(file.headers.get("content-type"), "audio/ogg; codecs=opus");
      assert.equal(file.body, "voice-1");
      assert.equal(file.headers.get("cache-control"), "private, no-store");
      assert.equal(file.headers.get("content-disposition"), "inline");
      assert.equal(file.headers.get("content-security-policy"), "sandbox; default-src 'none'");
      assert.equal(file.headers.get("cross-origin-resource-policy"), "same-origin");

      // The signed URL of the read serves the file without credentials, 5 to 10 minutes.
      const signedUrlOf = async (message: { id: string; conversationId: string }) => {
        const read = await c.graphql(
          `query($id: ID!) { conversationMessages(conversationId: $id, last: 100) { edges { node { id mediaSignedUrl } } } }`,
          { id: message.conversationId },
        );
        assert.equal(read.body.errors, undefined, JSON.stringify(read.body.errors));
        // deno-lint-ignore no-explicit-any
        return read.body.data.conversationMessages.edges.find((e: any) => e.node.id === message.id).node
          .mediaSignedUrl;
      };
      for (const link of [row.mediaSignedUrl, await signedUrlOf(m)]) {
        const parts = new RegExp(`^/api/messages/${m.id}/media\\?expires=(\\d+)&signature=[\\w-]{43}$`).exec(
          link,
        );
        assert.ok(parts, link);
        const left = Number(parts[1]) - Date.now() / 1000;
        assert.ok(left > LINK_SLOT_SECONDS - 5 && left <= 2 * LINK_SLOT_SECONDS, `${left} s left`);
        const anonymous = await s.t.anon.request("GET", link);
        assert.equal(anonymous.status, 200);
        assert.equal(anonymous.body, "voice-1");
        assert.equal(anonymous.headers.get("content-type"), "audio/ogg; codecs=opus");
        assert.equal(anonymous.headers.get("content-disposition"), "inline");
        assert.equal(anonymous.headers.get("content-security-policy"), "sandbox; default-src 'none'");
      }
      const keys = s.t.app.deps.jwt;
      const soon = linkExpiry(Date.now());
      const other = await s.t.seed.workspace("Other");
      const refused = [
        // Expired.
        signedMediaPath(keys, {
          messageId: m.id,
          workspaceId: s.workspaceId,
          expires: Math.floor(Date.now() / 1000) - 1,
        }),
        // Signed for another workspace, or another message.
        signedMediaPath(keys, { messageId: m.id, workspaceId: other.workspaceId, expires: soon }),
        signedMediaPath(keys, {
          messageId: "cmxnotamessage0000000000",
          workspaceId: s.workspaceId,
          expires: soon,
        })
          .replace("cmxnotamessage0000000000", m.id),
        // Its expiry moved.
        row.mediaSignedUrl.replace(/expires=\d+/, `expires=${soon + LINK_SLOT_SECONDS}`),
        `/api/messages/${m.id}/media?signature=x`,
      ];
      for (const link of refused) assertProblem(await s.t.anon.get(link), 401, "UNAUTHENTICATED");
      // A message without media has no signed URL.
      const textMessage = await db.message.findFirstOrThrow({
        where: { type: "TEXT", senderKind: "CUSTOMER" },
      });
      assert.equal(await signedUrlOf(textMessage), null);

      const gone = await db.message.findFirstOrThrow({ where: { mediaId: "audio-missing" } });
      assertProblem(await c.get(`/api/messages/${gone.id}/media`), 404, "MEDIA_GONE");
      const text = await db.message.findFirstOrThrow({ where: { type: "TEXT", senderKind: "CUSTOMER" } });
      assertProblem(await c.get(`/api/messages/${text.id}/media`), 404, "NOT_FOUND");
      assertProblem(await other.owner.client.get(`/api/messages/${m.id}/media`), 404, "NOT_FOUND");
      assertProblem(await s.t.anon.get(`/api/messages/${m.id}/media`), 401, "UNAUTHENTICATED");
    });

    await t.step("a document of an active type (HTML) is served as a download under a sandbox", async () => {
      const page = bytes("<script>alert(document.cookie)</script>");
      s.graph.files.set("doc-html", { bytes: page, mimeType: "text/html" });
      const waId = await post(s, s.vision, "document", {
        mime_type: "text/html",
        sha256: sha(page),
        id: "doc-html",
        filename: "fatura.html",
      }, "5511900000020");
      const m = await stored(s, waId);
      const file = await s.owner.client.request("GET", `/api/messages/${m.id}/media`);
      assert.equal(file.status, 200);
      assert.equal(file.headers.get("content-type"), "text/html");
      assert.equal(
        file.headers.get("content-disposition"),
        `attachment; filename="fatura.html"; filename*=UTF-8''fatura.html`,
      );
      assert.equal(file.headers.get("content-security-policy"), "sandbox; default-src 'none'");
      assert.equal(file.headers.get("x-content-type-options"), "nosniff");
    });

    await t.step(
      "a type with a CRLF from Graph is stored clean; one stored before is cleaned on the way out",
      async () => {
        const pdf = bytes("%PDF-1.4 not really");
        s.graph.files.set("doc-crlf", { bytes: pdf, mimeType: "application/pdf\r\nX-Injected: 1" });
        const waId = await post(s, s.vision, "document", {
          mime_type: "application/pdf",
          sha256: sha(pdf),
          id: "doc-crlf",
          filename: "nota.pdf",
        }, "5511900000021");
        const m = await stored(s, waId);
        assert.equal(m.mediaMimeType, UNKNOWN_MIME_TYPE);
        const file = await s.owner.client.request("GET", `/api/messages/${m.id}/media`);
        assert.equal(file.status, 200);
        assert.equal(file.headers.get("content-type"), UNKNOWN_MIME_TYPE);
        assert.equal(file.headers.get("x-injected"), null);
        assert.equal(file.body, "%PDF-1.4 not really");

        // Stored as it came before types were cleaned, and Graph now describes the file without a type.
        await db.message.update({
          where: { id: m.id },
          data: { mediaMimeType: "text/plain\r\nX-Injected: 1" },
        });
        s.graph.files.set("doc-crlf", { bytes: pdf, mimeType: "text/plain", noMimeType: true });
        const again = await s.owner.client.request("GET", `/api/messages/${m.id}/media`);
        assert.equal(again.status, 200);
        assert.equal(again.headers.get("content-type"), UNKNOWN_MIME_TYPE);
        assert.equal(again.headers.get("x-injected"), null);
      },
    );
  } finally {
    await s.close();
  }
});

Deno.test("a voice note still being transcribed when MEDIA_WAIT_MS runs out: answered without it, its late transcript kept", async () => {
  const s = await setup({ MEDIA_WAIT_MS: "400" });
  let release!: () => void;
  try {
    s.ai.gate = new Promise((r) => release = r);
    const from = "5511900000030";
    const { waId } = await sendVoiceNote(s, {
      id: "audio-late",
      audio: "voice-late",
      said: "chegou tarde",
      from,
      mimeType: "audio/ogg",
    });
    await s.ai.waitForTranscriptions(1);
    // The window's reply job, due when the wait has run out, answers while the transcription hangs.
    await s.graph.waitForSends(1);
    assert.equal(s.ai.chats.length, 1);
    assert.equal(userText(s.ai.chats[0]), "[audio: not transcribed]");
    assert.deepEqual(sentTo(s, from), ["eco: [audio: not transcribed]"]);
    s.ai.gate = null;
    release();
    const m = await stored(s, waId);
    assert.equal(m.transcript, "chegou tarde");
    assert.equal(m.mediaError, null);
    // Late media gets no reply of its own; the customer's next message is answered alone, with the
    // late transcript in the history.
    const res = await postSigned(
      s.t.anon,
      s.vision.id,
      textMessage(s.vision.phoneNumberId, `wamid.text-${++n}`, "e agora?", from),
    );
    assert.equal(res.status, 200);
    await s.graph.waitForSends(2);
    assert.equal(s.ai.chats.length, 2);
    assert.equal(userText(s.ai.chats[1]), "e agora?");
    // deno-lint-ignore no-explicit-any
    const history = s.ai.chats[1].messages.slice(1, -1).map((h: any) => h.content);
    assert.deepEqual(history, ["[audio] chegou tarde", "eco: [audio: not transcribed]"]);
    assert.deepEqual(sentTo(s, from), ["eco: [audio: not transcribed]", "eco: e agora?"]);
  } finally {
    release?.();
    await s.close();
  }
});

Deno.test("a voice note stored before a crash is fetched, understood and answered after the restart", async () => {
  const graph = startMediaGraph();
  const ai = startAi(modelAnswer);
  const db = await createTestDatabase();
  const env = {
    DATABASE_URL: db.url,
    JWT_SECRET: "test-secret-test-secret-test-secret-0123456789",
    SECRETS_KEY: TEST_SECRETS_KEY,
    OUTBOUND_ALLOWLIST: RECEIVER_ALLOWLIST,
    APP_ENV: "test",
    OPENAI_API_KEY: "sk-test",
    OPENAI_BASE_URL: ai.baseUrl,
    WHATSAPP_GRAPH_URL: graph.url,
    GROUPING_FAST_MS: "300",
  };
  // The first process stores the message (and its media job) and dies before any job ran.
  const first = await buildApp(loadConfig(env), { logger: silentLogger, bootstrap: false, workers: false });
  let second: Awaited<ReturnType<typeof buildApp>> | undefined;
  try {
    const seed = new Seed(first);
    const { owner } = await seed.workspace();
    const agent = await seed.agent(owner.client, { messageGroupingTime: "FAST" });
    const channel = await createWhatsAppChannel(owner.client, agent.id);
    const audio = bytes("voice-crash");
    graph.files.set("audio-crash", { bytes: audio, mimeType: "audio/ogg" });
    ai.transcripts.set("voice-crash", "ainda estou aqui");
    await processInbound(first.deps, {
      channelId: channel.id,
      body: JSON.stringify(customerMessage(channel.phoneNumberId, "wamid.crash", "audio", {
        mime_type: "audio/ogg",
        sha256: sha(audio),
        id: "audio-crash",
      }, "5511900000099")),
    });
    const m = await first.deps.db.message.findFirstOrThrow({ where: { externalId: "wamid.crash" } });
    assert.equal(m.mediaPending, true);
    await first.stop();

    second = await buildApp(loadConfig(env), { logger: silentLogger, bootstrap: false });
    await graph.waitForSends(1, 60_000);
    assert.deepEqual(graph.sends.map((b) => b.text.body), ["eco: [audio] ainda estou aqui"]);
    assert.equal(ai.transcriptions.length, 1);
    const after = await second.deps.db.message.findUniqueOrThrow({ where: { id: m.id } });
    assert.equal(after.transcript, "ainda estou aqui");
    assert.equal(after.mediaPending, false);
  } finally {
    await second?.stop();
    await db.drop();
    await graph.close();
    await ai.close();
  }
});
