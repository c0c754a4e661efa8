/**
 * `deno task bench templates`: a channel's template sync (src/templates/sync.ts, as the job and
 * POST .../templates/sync run it) of 6 000 templates over 60 pages of 100 from a Graph API stand-in
 * in its own process, on a throwaway PostgreSQL with pg_stat_statements: the first sync (every
 * template new), then syncs with nothing new, and one after a tenth were deleted here (they come
 * back as new). Goal: under 10 s each. Writes bench/results/templates.md; its last line is
 * `templates: <N> synced in <s> s, <n> statements` (the first sync). Not part of the tests.
 */
import { applyMigrations } from "../src/db/migrate.ts";
import { createPrisma } from "../src/db/client.ts";
import { OutboundPolicy } from "../src/shared/outbound.ts";
import { systemClock } from "../src/shared/clock.ts";
import type { Deps } from "../src/context.ts";
import { syncTemplates } from "../src/templates/sync.ts";
import { testConfig, testSecretBox } from "../tests/_helpers/app.ts";
import { openStats, resetStatements, startStatsPostgres } from "./_pg_stats.ts";
import { denoScript, spawnReady } from "./_spawn.ts";

const TEMPLATES = 6000;
const ROUNDS = 3;

export async function runTemplatesBench(): Promise<string> {
  const dataDir = await Deno.makeTempDir({ prefix: "bench-templates-" });
  // Reachable by the "postgres" user the embedded cluster runs as under root.
  await Deno.chmod(dataDir, 0o755);
  const pg = await startStatsPostgres(`${dataDir}/pg`);
  const [cmd, args] = denoScript("bench/_template_graph.ts");
  const { child: graph, line } = await spawnReady(cmd, args, { TEMPLATES: String(TEMPLATES) });
  const port = line.match(/ready (\d+)/)![1];
  const stats = await openStats(pg.url);
  try {
    await applyMigrations(pg.url);
    const config = testConfig(pg.url, { WHATSAPP_GRAPH_URL: `http://127.0.0.1:${port}/v21.0` });
    const db = createPrisma(pg.url);
    const secrets = testSecretBox();
    // What a sync uses of the app: its database, the outbound client, the Graph URL, the clock and the secrets.
    const deps = {
      db,
      config,
      clock: systemClock,
      secrets,
      outbound: new OutboundPolicy(config.outboundAllowlist),
    } as unknown as Deps;
    const workspace = await db.workspace.create({ data: { name: "Bench" } });
    const agent = await db.agent.create({
      data: { workspaceId: workspace.id, name: "Ana", model: "gpt-4o-mini", systemPrompt: "Be kind." },
    });
    const channel = await db.channel.create({
      data: {
        workspaceId: workspace.id,
        agentId: agent.id,
        type: "WHATSAPP",
        label: "Bench",
        phoneNumberId: "1065403522",
        businessAccountId: "102290129340398",
        credentials: secrets.seal(
          JSON.stringify({ accessToken: "bench-token", appSecret: "s", verifyToken: "v" }),
        ),
      },
    });

    // What the app sent (top level), and what PostgreSQL ran inside it: the foreign-key checks of
    // each inserted row. The readings' own statements are left out.
    const statementsSent = async () => {
      const { rows: [counts] } = await stats.query<{ sent: string; nested: string }>(
        `SELECT COALESCE(sum(calls) FILTER (WHERE toplevel), 0)::text AS sent,
                COALESCE(sum(calls) FILTER (WHERE NOT toplevel), 0)::text AS nested
           FROM pg_stat_statements
          WHERE query NOT LIKE '%pg_stat_statements%' AND query <> 'SELECT now() AS since'`,
      );
      return { statements: Number(counts.sent), nested: Number(counts.nested) };
    };
    const sync = async (label: string) => {
      await resetStatements(stats);
      const t0 = performance.now();
      const outcome = await syncTemplates(deps, channel.id);
      const seconds = (performance.now() - t0) / 1000;
      if (!outcome.ok) throw new Error(`sync failed: ${JSON.stringify(outcome)}`);
      const { statements, nested } = await statementsSent();
      const stored = await db.whatsAppTemplate.count({ where: { channelId: channel.id } });
      return { label, seconds, statements, nested, pages: outcome.pages, stored, removed: outcome.removed };
    };

    const rows = [await sync("first sync: every template new")];
    for (let i = 1; i < ROUNDS; i++) rows.push(await sync(`sync ${i + 1}: nothing new`));
    // A tenth missing here (deleted before the sync): the stand-in lists them all, so they come back as new.
    await db.$executeRaw`DELETE FROM "WhatsAppTemplate" WHERE "channelId" = ${channel.id} AND name LIKE '%0'`;
    rows.push(await sync("after a tenth were removed here: they come back"));
    await db.$disconnect();

    const load = (await Deno.readTextFile("/proc/loadavg").catch(() => "?")).split(" ").slice(0, 3).join(" ");
    const first = rows[0];
    const lastLine = `templates: ${first.stored} synced in ${
      first.seconds.toFixed(2)
    } s, ${first.statements} statements`;
    const report = [
      "# Template sync",
      "",
      `${
        new Date().toISOString()
      }, Deno ${Deno.version.deno}, ${navigator.hardwareConcurrency} cores, load ${load}.`,
      `${TEMPLATES} templates over ${first.pages} pages of 100 from a Graph API stand-in in its own process;`,
      "statements the app sent, counted by pg_stat_statements (beside them, the nested ones PostgreSQL ran:",
      "the foreign-key checks of each inserted row). Goal: under 10 s.",
      "",
      "| sync | seconds | pages | statements | nested | stored | removed |",
      "|---|---|---|---|---|---|---|",
      ...rows.map((r) =>
        `| ${r.label} | ${
          r.seconds.toFixed(2)
        } | ${r.pages} | ${r.statements} | ${r.nested} | ${r.stored} | ${r.removed} |`
      ),
      "",
      lastLine,
      "",
    ].join("\n");
    await Deno.mkdir(new URL("./results/", import.meta.url), { recursive: true });
    await Deno.writeTextFile(new URL("./results/templates.md", import.meta.url), report);
    console.log(report);
    return lastLine;
  } finally {
    await stats.end();
    graph.kill();
    await graph.status;
    await pg.stop();
    await Deno.remove(dataDir, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) await runTemplatesBench();
