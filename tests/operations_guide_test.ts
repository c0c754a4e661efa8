/**
 * docs/operations.md's WhatsApp steps are true as far as a Graph stand-in goes: its marked shell
 * blocks, run in bash as an operator pastes them (only `PUBLIC_URL`, the login and Meta's Graph
 * address replaced), create the channel with the guide's values and print the callback URL and
 * verify token, make Meta's calls to the stand-in with the guide's token, pass the verify handshake,
 * post a message signed with the app secret (stored), and list the WABA's templates from the stand-in.
 * Its backup of a stopped server's embedded PostgreSQL, restored into an emptied DATA_DIR, brings
 * back the data, the generated secrets key (a channel's sealed verify token still answers Meta's
 * handshake) and the JWT secret (a login from before still works).
 *
 * Blocks are marked by an HTML comment on the line before their fence: `<!-- operations:values -->`
 * (the operator's values), `<!-- operations:whatsapp -->` (Switchboard's side, in order),
 * `<!-- operations:graph -->` (Meta's Graph API), `<!-- operations:backup -->` and
 * `<!-- operations:restore -->`.
 */
import assert from "node:assert/strict";
import { startTestApp } from "./_helpers/app.ts";
import { eventually, startReceiver } from "./_helpers/receiver.ts";
import { metaTemplate } from "./_helpers/templates.ts";
import { freePort, startServerProcess } from "./_helpers/server_process.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const GUIDE = await Deno.readTextFile(`${ROOT}docs/operations.md`);

/** The marked `sh` blocks of the guide, as pasted (a block under a list item loses its indentation). */
function guideBlocks(kind: string): string[] {
  const re = /^( *)<!-- operations:([a-z]+) -->\n\1```sh\n([\s\S]*?)^\1```$/gm;
  return [...GUIDE.matchAll(re)].filter((m) => m[2] === kind).map((m) =>
    m[3].split("\n").map((l) => l.startsWith(m[1]) ? l.slice(m[1].length) : l).join("\n")
  );
}

/** The guide's value of `NAME=` in its values block, as the shell reads it. */
function valueOf(block: string, name: string): string {
  const m = new RegExp(`^${name}=(.*)$`, "m").exec(block);
  assert.ok(m, `the values block sets ${name}`);
  return m[1].replace(/^'(.*)'$/, "$1");
}

/** `block` with the line `NAME=...` replaced by `NAME=value` (single-quoted). */
function replaced(block: string, name: string, value: string): string {
  valueOf(block, name);
  return block.replace(new RegExp(`^${name}=.*$`, "m"), `${name}='${value}'`);
}

Deno.test("the operator's guide marks its WhatsApp blocks: values, Switchboard's side, Meta's calls", async () => {
  const [values] = guideBlocks("values");
  assert.ok(values, "the values block");
  for (
    const name of [
      "PUBLIC_URL",
      "EMAIL",
      "PASSWORD",
      "PHONE_NUMBER_ID",
      "WABA_ID",
      "ACCESS_TOKEN",
      "APP_SECRET",
    ]
  ) {
    valueOf(values, name);
  }
  assert.match(valueOf(values, "PUBLIC_URL"), /^https:\/\/[^/]+$/, "a public HTTPS address");
  assert.match(values, /^VERIFY_TOKEN=\$\(openssl rand -hex 16\)$/m);
  assert.equal(guideBlocks("whatsapp").length, 2);
  const [graph] = guideBlocks("graph");
  // The Graph address the guide calls is the one the server calls by default.
  const config = await Deno.readTextFile(`${ROOT}src/config.ts`);
  const serverDefault = /WHATSAPP_GRAPH_URL: z\.url\(\)\.default\("([^"]+)"\)/.exec(config)?.[1];
  assert.equal(valueOf(graph, "GRAPH"), serverDefault);
});

Deno.test("the guide's WhatsApp steps, pasted in bash, connect a number through a Graph stand-in", async () => {
  const [values] = guideBlocks("values");
  const [create, check] = guideBlocks("whatsapp");
  const [graphBlock] = guideBlocks("graph");
  const guide = {
    phone: valueOf(values, "PHONE_NUMBER_ID"),
    waba: valueOf(values, "WABA_ID"),
    token: valueOf(values, "ACCESS_TOKEN"),
    secret: valueOf(values, "APP_SECRET"),
  };
  // Meta as far as a stand-in goes: the templates list; the other calls answer as Meta's do.
  const graph = startReceiver((call) =>
    call.path.endsWith("/message_templates")
      ? Response.json({ data: [metaTemplate(1)], paging: { cursors: { before: "MA", after: "MQ" } } })
      : Response.json({ success: true })
  );
  const port = freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  const t = await startTestApp({
    PORT: String(port),
    HOST: "127.0.0.1",
    PUBLIC_URL: publicUrl,
    WHATSAPP_GRAPH_URL: graph.url(""),
  });
  try {
    await t.app.start();
    const { owner } = await t.seed.workspace("Acme");
    const agent = await t.seed.agent(owner.client, { name: "Ana" });
    let script = replaced(values, "PUBLIC_URL", publicUrl);
    script = replaced(script, "EMAIL", owner.email);
    script = replaced(script, "PASSWORD", owner.password);
    const graphCalls = replaced(graphBlock, "GRAPH", graph.url(""));
    const run = await new Deno.Command("bash", {
      args: ["-euo", "pipefail", "-c", [script, create, graphCalls, check].join("\n")],
      cwd: ROOT,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stdout = new TextDecoder().decode(run.stdout);
    const stderr = new TextDecoder().decode(run.stderr);
    assert.equal(run.code, 0, `${stdout}\n${stderr}`);
    assert.equal(stderr, "");

    const channel = await t.app.deps.db.channel.findFirstOrThrow({ where: { agentId: agent.id } });
    const lines = stdout.trimEnd().split("\n");
    const verifyToken = /^Verify token: ([0-9a-f]{32})$/m.exec(stdout)?.[1];
    assert.ok(verifyToken, stdout);
    assert.deepEqual(lines, [
      `${agent.id}  Ana`,
      `Callback URL: ${publicUrl}/webhooks/whatsapp/${channel.id}`,
      `Verify token: ${verifyToken}`,
      '{"success":true}',
      '{"success":true}',
      "1158201444",
      "200",
      "seasonal_promotion_1 en_US APPROVED",
    ]);

    // The channel holds the guide's values.
    assert.equal(channel.phoneNumberId, guide.phone);
    assert.equal(channel.businessAccountId, guide.waba);
    const inbound = await t.app.deps.channels.fresh(channel.id);
    assert.deepEqual(inbound?.secrets, { accessToken: guide.token, appSecret: guide.secret, verifyToken });
    // The signed post was taken as Meta's: its message is stored on the channel.
    const stored = await eventually(async () =>
      (await t.app.deps.db.message.findFirst({
        where: { content: "Hello from the setup check", conversation: { channelId: channel.id } },
      })) ?? undefined
    );
    assert.deepEqual([stored.direction, stored.senderKind], ["INBOUND", "CUSTOMER"]);
    // Meta's calls, the guide's and the server's (the sync on create, then the guide's), each with
    // the guide's token.
    const posts = graph.calls.filter((c) => c.method === "POST");
    assert.deepEqual(posts.map((c) => c.path), [
      `/${guide.waba}/subscribed_apps`,
      `/${guide.phone}/register`,
    ]);
    assert.deepEqual(JSON.parse(posts[1].body), { messaging_product: "whatsapp", pin: "246810" });
    const lists = graph.calls.filter((c) => c.method === "GET").map((c) => c.path);
    assert.ok(
      lists.length >= 1 && lists.every((p) => p === `/${guide.waba}/message_templates`),
      lists.join(),
    );
    for (const call of graph.calls) assert.equal(call.headers.get("authorization"), `Bearer ${guide.token}`);
  } finally {
    await t.close();
    await graph.close();
  }
});

/** The guide's block of `kind` run in bash in `cwd` with `env`; fails unless it succeeds silently. */
async function runBlock(kind: string, cwd: string, env: Record<string, string>): Promise<void> {
  const [block] = guideBlocks(kind);
  assert.ok(block, `the ${kind} block`);
  const run = await new Deno.Command("bash", {
    args: ["-euo", "pipefail", "-c", block],
    cwd,
    env,
    stdin: "null",
  }).output();
  const output = new TextDecoder().decode(run.stdout) + new TextDecoder().decode(run.stderr);
  assert.equal(run.code, 0, output);
  assert.equal(output, "", `${kind} prints nothing`);
}

Deno.test("the guide's backup of a stopped embedded PostgreSQL restores the data, the secrets key and logins", async () => {
  const work = await Deno.makeTempDir({ prefix: "switchboard-backup-" });
  const dataDir = `${work}/data`;
  await Deno.mkdir(dataDir);
  // As root the embedded PostgreSQL runs as the postgres user, which must reach the directory.
  await Deno.chmod(work, 0o755);
  await Deno.chmod(dataDir, 0o755);
  // Empty is unset: the JWT secret and the secrets key are generated into DATA_DIR, as by default.
  const env = {
    DATA_DIR: dataDir,
    JWT_SECRET: "",
    SECRETS_KEY: "",
    BOOTSTRAP_OWNER_EMAIL: "owner@example.com",
    BOOTSTRAP_OWNER_PASSWORD: "owner-password-1",
  };
  const call = (url: string, path: string, token?: string, body?: unknown) =>
    fetch(`${url}${path}`, {
      method: body ? "POST" : "GET",
      headers: {
        "content-type": "application/json",
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    });
  let server = await startServerProcess("", env);
  let token: string, channel: string;
  try {
    const login = await (await call(server.url, "/api/auth/login", undefined, {
      email: "owner@example.com",
      password: "owner-password-1",
    })).json();
    token = login.token;
    const workspace = login.workspaces[0].id;
    const api = (path: string, body: unknown) =>
      fetch(`${server.url}${path}`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          authorization: `Bearer ${token}`,
          "x-workspace-id": workspace,
        },
        body: JSON.stringify(body),
      });
    const agent = await (await api("/api/agents", { name: "Kept" })).json();
    const created = await api(`/api/agents/${agent.id}/channels`, {
      type: "WHATSAPP",
      label: "WhatsApp",
      config: {
        phoneNumberId: "5550101",
        accessToken: "kept-token",
        appSecret: "kept-secret",
        verifyToken: "kept-verify",
      },
    });
    assert.equal(created.status, 201);
    channel = (await created.json()).id;
  } finally {
    await server.stop();
  }
  assert.ok((await Deno.stat(`${dataDir}/secrets-key`)).isFile);
  await runBlock("backup", work, { DATA_DIR: dataDir });
  await runBlock("restore", work, { DATA_DIR: dataDir });

  server = await startServerProcess("", env);
  try {
    const me = await call(server.url, "/api/auth/me", token);
    assert.equal(me.status, 200, "a login from before the backup");
    const agents = await (await fetch(`${server.url}/api/agents`, {
      headers: { authorization: `Bearer ${token}`, "x-workspace-id": (await me.json()).workspaces[0].id },
    })).json();
    assert.deepEqual(agents.data.map((a: { name: string }) => a.name), ["Kept"]);
    const handshake = await call(
      server.url,
      `/webhooks/whatsapp/${channel}?hub.mode=subscribe&hub.verify_token=kept-verify&hub.challenge=42`,
    );
    assert.equal(await handshake.text(), "42");
  } finally {
    await server.stop();
  }
  await Deno.remove(work, { recursive: true });
});
