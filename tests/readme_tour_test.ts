/**
 * The README's tour is true: its shell blocks, as a user pastes them, run against a real server
 * process started with the tour's own settings, beside the stand-ins of examples/standins.ts (on
 * loopback, on free ports), in bash and, when it is installed, in zsh. Each block must end with
 * status 0, print what the README says it prints and write nothing to stderr; the live feeds the
 * tour tells the user to open (examples/subscribe.ts) must show the events the README names.
 *
 * Blocks are marked in README.md by an HTML comment on the line before their fence:
 * `<!-- tour:standins -->` (terminal 1), `<!-- tour:server -->` (terminal 2: its variable
 * assignments become the server's environment, with the test database instead of DATA_DIR) and
 * `<!-- tour -->` (terminal 3, run in order in one shell, as pasted). The tour's `BASE=` line and its
 * stand-in ports are the only things replaced.
 */
import assert from "node:assert/strict";
import { createTestDatabase } from "./_helpers/db.ts";
import { freePort, TEST_JWT_SECRET } from "./_helpers/server_process.ts";
import { TEST_SECRETS_KEY } from "./_helpers/app.ts";
import {
  baseEnv,
  type Child,
  client,
  DEFAULT_BASE,
  freePorts,
  README,
  ROOT,
  serverBlock,
  serverEnv,
  spawn,
  standinsBlock,
  tourBlocks,
  withPorts,
} from "./_helpers/tour.ts";

/** The README's marked blocks and the console walk-through's (docs/console.md), pasted alike. */
const blocks = [...tourBlocks(README), ...tourBlocks(await Deno.readTextFile(`${ROOT}docs/console.md`))];

/** What a shell would do with the text outside quotes, in the places bash and zsh disagree. */
function zshPitfalls(block: string): string[] {
  const problems: string[] = [];
  let quote: "'" | '"' | null = null;
  let line = 1;
  for (let i = 0; i < block.length; i++) {
    const c = block[i];
    if (c === "\n") line++;
    if (c === "!") problems.push(`line ${line}: "!" (history expansion in interactive shells)`);
    if (quote === "'") {
      if (c === "'") quote = null;
      continue;
    }
    if (c === "\\" && quote === null) {
      i++;
      continue;
    }
    if (quote === '"') {
      if (c === '"') quote = null;
      continue;
    }
    if (c === "'" || c === '"') quote = c;
    else if (c === "#" && (i === 0 || /\s/.test(block[i - 1]))) {
      problems.push(`line ${line}: a "#" comment (interactive zsh runs it as a command)`);
    } else if ("?*[".includes(c) && block[i - 1] !== "$") {
      problems.push(`line ${line}: unquoted "${c}" (zsh: no matches found)`);
    }
  }
  return problems;
}

Deno.test("the README marks its tour: stand-ins, server and the client's blocks", () => {
  assert.ok(standinsBlock.includes("deno run -A examples/standins.ts"), "the stand-ins block");
  assert.match(serverBlock, /deno task start\s*$/, "the server block ends with deno task start");
  assert.ok(client.length >= 5, `the client's blocks (found ${client.length})`);
  assert.equal(client[0].split("\n")[0], DEFAULT_BASE, "the first client block starts by setting BASE");
});

Deno.test("the configuration table (docs/configuration.md) names every variable src/config.ts reads", async () => {
  const source = await Deno.readTextFile(`${ROOT}src/config.ts`);
  const schema = source.slice(source.indexOf("const envSchema"), source.indexOf("export type Env"));
  const variables = [...schema.matchAll(/^ {2}([A-Z][A-Z0-9_]+):/gm)].map((m) => m[1]);
  assert.ok(variables.length > 30, "the variables of envSchema");
  const section = await Deno.readTextFile(`${ROOT}docs/configuration.md`);
  assert.deepEqual(
    variables.filter((name) => !section.includes(`\`${name}\``)),
    [],
    "missing from the table",
  );
});

Deno.test("the tour's blocks avoid what breaks when pasted into zsh or an interactive shell", () => {
  for (const b of blocks) assert.deepEqual(zshPitfalls(b.text), [], b.text);
});

/** `.tools/node_modules/.bin/deno run -A examples/subscribe.ts ...` as printed by a block, started. */
async function startFeed(printed: string): Promise<Child> {
  const m = /^(\S*deno) run -A (examples\/subscribe\.ts .+)$/m.exec(printed);
  assert.ok(m, `a printed feed command in:\n${printed}`);
  const feed = spawn([Deno.execPath(), "run", "-A", ...m[2].trim().split(/\s+/)], baseEnv());
  await feed.stderr.waitFor(/connected to/, 30_000, "the live feed's connection");
  // The subscribe message follows the acknowledgement at once; give the server a moment to take it.
  await new Promise((r) => setTimeout(r, 1000));
  return feed;
}

const SHELLS = ["bash", "zsh"].filter((shell) =>
  new Deno.Command("sh", { args: ["-c", `command -v ${shell}`], stdout: "null", stderr: "null" })
    .outputSync().success
);
if (!SHELLS.includes("zsh")) console.warn("zsh is not installed: the tour runs in bash only");

/** What the stand-ins hear in the tour's voice note, and the text of its PDF. */
const TRANSCRIPT = "Hi, I would like to book an appointment on March 14. My name is Sheena Nelson.";
const REFERRAL = "Referral for Sheena Nelson: dermatology, March 14.";

/** A pattern of these whole lines, one after the other, exactly. */
const lines = (...texts: string[]) =>
  new RegExp(`^${texts.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("\n")}$`, "m");

/** What each client block prints, as the README says. */
const EXPECTED: RegExp[][] = [
  [/^logged in, workspace \w{8,}$/m],
  [/^track_order$/m, /^1158201444$/m, /examples\/subscribe\.ts /],
  // The helpers `post` and `send`: nothing printed.
  [/^\n?$/],
  [/(webhook answered 200\n[\s\S]*){3}/],
  [
    /^asked for a person\nHUMAN\nOPEN$/m,
    /^CUSTOMER: Hi there$/m,
    /^AI: .*Order A-1001 ships tomorrow/m,
    /^HUMAN: Hi Sheena/m,
  ],
  [
    lines(
      "102290129340398",
      "order_update APPROVED: Hi {{1}}, your order {{2}} has shipped.",
      "still_there APPROVED: Hi {{first_name}}, we have an answer for you. Reply to continue the conversation.",
      "HUMAN",
      "HUMAN",
      "WINDOW_CLOSED",
      "HUMAN",
    ),
    lines(
      "TEXT FAILED: Good morning Sheena, are you still there? (131047)",
      "TEMPLATE SENT: Hi Sheena, we have an answer for you. Reply to continue the conversation.",
      "OPEN",
    ),
  ],
  [/^true\n\["AUDIO"\]\n(webhook answered 200\n){3}$/m],
  [
    lines(
      `AUDIO: ${TRANSCRIPT} (audio/ogg; codecs=opus, 17 bytes)`,
      "TEXT: One moment. Sheena Nelson, you are booked for March 14 at 10:00.",
      "IMAGE: [image] Is this rash serious? (image/png, 70 bytes)",
      "TEXT: I can see your photo: a 1x1 PNG image.",
      `DOCUMENT: ${REFERRAL} (application/pdf, 625 bytes)`,
      `TEXT: I read referral.pdf: "${REFERRAL}"`,
    ),
  ],
  [
    /^MANAGER\nhttps:\/\/hooks\.example\.com\/sent\nI proposed it \(approval \w+\); it waits for your approval\.\n0\.675\nPENDING$/m,
    /subscribe\.ts .* approvals /,
  ],
  [
    /^APPROVED\nAddress customers formally, as sir or madam\.$/m,
    /^The manager asked for a more formal tone\.$/m,
    /^REJECTED$/m,
    /^delete_webhook REJECTED\nupdate_agent_prompt APPROVED$/m,
  ],
  [/"name":"Ana"/, /"name":"Bruno"/],
];

for (const shell of SHELLS) {
  Deno.test(`the README tour runs as pasted into ${shell}`, async () => {
    assert.equal(
      client.length,
      EXPECTED.length,
      "a block of the tour without expectations here, or one less",
    );
    const db = await createTestDatabase();
    const ports = freePorts();
    const children: Child[] = [];
    try {
      const standins = spawn(
        [Deno.execPath(), "run", "-A", "examples/standins.ts"],
        { ...baseEnv(), STANDINS_PORT: String(ports[0]) },
      );
      children.push(standins);
      await standins.stdout.waitFor(/\[intent\] "listening/, 30_000, "the stand-ins");

      const port = freePort();
      const server = spawn([Deno.execPath(), "run", "-A", "--unstable-no-legacy-abort", "src/main.ts"], {
        ...baseEnv(),
        ...serverEnv(serverBlock, ports),
        DATABASE_URL: db.url,
        JWT_SECRET: TEST_JWT_SECRET,
        SECRETS_KEY: TEST_SECRETS_KEY,
        PORT: String(port),
      });
      children.push(server);
      await server.stderr.waitFor(/"msg":"listening"/, 60_000, "the server");
      await server.stdout.waitFor(
        /First owner created\. Open http:\/\/localhost:\d+ and log in as owner@example\.com with BOOTSTRAP_OWNER_PASSWORD\./,
        1000,
        "the first owner's line",
      );

      const sh = spawn([shell], baseEnv(), { stdin: true });
      children.push(sh);
      const writer = sh.process.stdin.getWriter();
      const encoder = new TextEncoder();
      let feed: Child | undefined;
      for (const [i, original] of client.entries()) {
        const text = withPorts(
          i === 0 ? original.replace(DEFAULT_BASE, `BASE=http://127.0.0.1:${port}`) : original,
          ports,
        );
        const from = sh.stdout.text.length;
        await writer.write(encoder.encode(`${text}\nprintf '\\n__TOUR_BLOCK_${i} %s\\n' "$?"\n`));
        const done = await sh.stdout.waitFor(
          new RegExp(`__TOUR_BLOCK_${i} (\\d+)\\n`),
          120_000,
          `block ${i}`,
        );
        const output = sh.stdout.text.slice(from, done.index);
        const context =
          `block ${i} in ${shell}:\n${text}\nprinted:\n${output}\nstderr:\n${sh.stderr.text}\n` +
          `server:\n${server.stderr.text.slice(-4000)}`;
        assert.equal(done[1], "0", `exit status of ${context}`);
        for (const pattern of EXPECTED[i]) assert.match(output, pattern, context);
        if (/subscribe\.ts /.test(output)) {
          await feed?.stop();
          feed = await startFeed(output);
          children.push(feed);
        }
      }
      await writer.close();
      assert.equal(sh.stderr.text, "", "nothing on the shell's stderr");

      // Terminal 1: the intent's call and every message to the customer reached the stand-ins.
      assert.match(standins.stdout.text, /\[intent\] .*"intentName":"track_order".*"orderNumber":"A-1001"/);
      const sent = standins.stdout.text.split("\n").filter((l) =>
        l.includes('[graph] {"path":"/1001/messages"')
      );
      assert.ok(
        sent.some((l) => l.includes("Order A-1001 ships tomorrow")),
        `the reply with the intent's answer reached the Graph stand-in:\n${sent.join("\n")}`,
      );
      assert.ok(sent.some((l) => l.includes("Hi Sheena, Maria here")), "the human's reply went to WhatsApp");

      // The template after Meta's 131047, as Meta's send reference shapes it.
      const templates = standins.stdout.text.split("\n").filter((l) =>
        l.startsWith('[graph] {"path":"/1001/messages"')
      )
        .map((l) => JSON.parse(l.slice("[graph] ".length))).filter((l) => l.template);
      assert.deepEqual(templates, [{
        path: "/1001/messages",
        to: "16505551234",
        template: {
          name: "still_there",
          language: { code: "en_US" },
          components: [{
            type: "body",
            parameters: [{ type: "text", parameter_name: "first_name", text: "Sheena" }],
          }],
        },
      }]);

      // The media part: the files fetched with the channel's token, the voice note uploaded under a
      // name the endpoint takes, the AUDIO intent called with what was heard, the answers sent.
      const logged = (who: string) =>
        standins.stdout.text.split("\n").filter((l) => l.startsWith(`[${who}] {`))
          .map((l) => JSON.parse(l.slice(who.length + 3)));
      assert.deepEqual(logged("graph").filter((l) => l.mimeType).map((l) => l.path), [
        "/voice-1",
        "/files/voice-1",
        "/photo-1",
        "/files/photo-1",
        "/referral-1",
        "/files/referral-1",
      ]);
      assert.deepEqual(logged("model").filter((l) => l.transcribing), [
        { transcribing: "voice-note.ogg", type: "audio/ogg", bytes: 17, model: "whisper-1" },
      ]);
      const booked = logged("intent").filter((l) => l.intentName === "Agendar Consulta");
      assert.deepEqual(booked.map((l) => l.fields), [{ date: "March 14", name: "Sheena Nelson" }]);
      assert.equal(booked[0].context.contactName, "Sheena");
      assert.deepEqual(logged("graph").filter((l) => l.path === "/1001/messages").slice(-3), [
        {
          path: "/1001/messages",
          to: "16505551234",
          text: "One moment. Sheena Nelson, you are booked for March 14 at 10:00.",
        },
        { path: "/1001/messages", to: "16505551234", text: "I can see your photo: a 1x1 PNG image." },
        { path: "/1001/messages", to: "16505551234", text: `I read referral.pdf: "${REFERRAL}"` },
      ]);

      // Terminal 4: the feeds named in the README (the conversations one first, then approvals).
      const feeds = children.filter((c) => c !== standins && c !== server && c !== sh);
      assert.equal(feeds.length, 2, "two feeds were opened");
      await feeds[0].stop();
      for (const type of ["OPENED", "MESSAGE_ADDED", "STATUS_CHANGED"]) {
        assert.ok(feeds[0].stdout.text.includes(`"type":"${type}"`), `${type} in:\n${feeds[0].stdout.text}`);
      }
      assert.ok(feeds[0].stdout.text.includes('"status":"HUMAN"'));
      for (const type of ["AUDIO", "IMAGE", "DOCUMENT"]) {
        assert.ok(
          feeds[0].stdout.text.includes(`"sender":"CUSTOMER","type":"${type}"`),
          `${type} message added`,
        );
      }
      await feeds[1].stop();
      const approvals = [...feeds[1].stdout.text.matchAll(/"type":"([A-Z]+)"/g)].map((m) => m[1]);
      assert.deepEqual(approvals, ["APPROVED", "CREATED", "REJECTED"], feeds[1].stdout.text);
    } finally {
      for (const child of children.reverse()) await child.stop();
      await db.drop();
    }
  });
}
