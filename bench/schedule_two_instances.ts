/**
 * One-off check (not part of the tests: it takes minutes of wall clock, cron resolution being one
 * minute): two pg-boss instances with `schedule: true` on one database, both registering the same
 * every-minute schedule, make one job per minute slot between them. Run:
 * `deno run -A bench/schedule_two_instances.ts [minutes]`; prints the jobs per slot.
 */
import { PgBoss } from "pg-boss";
import { ensureDatabase, startEmbeddedPostgres } from "../src/db/embedded.ts";
import { BOSS_SCHEMA } from "../src/jobs/boss.ts";

const minutes = Number(Deno.args[0] ?? 3);
const dir = await Deno.makeTempDir({ prefix: "switchboard-schedule-check-" });
await Deno.chmod(dir, 0o755);
const pg = await startEmbeddedPostgres({ dir: `${dir}/data`, database: "postgres", persistent: false });
const QUEUE = "schedule-check";
const bosses: PgBoss[] = [];
try {
  await ensureDatabase(pg.adminUrl, "check");
  const url = pg.adminUrl.replace(/\/postgres$/, "/check");
  for (let i = 0; i < 2; i++) {
    // Short cron intervals, so both instances pass over every slot several times.
    const boss = new PgBoss({
      connectionString: url,
      schema: BOSS_SCHEMA,
      schedule: true,
      cronMonitorIntervalSeconds: 1,
      cronWorkerIntervalSeconds: 1,
    });
    boss.on("error", (e) => console.error(`instance ${i}:`, e));
    await boss.start();
    await boss.createQueue(QUEUE);
    await boss.schedule(QUEUE, "* * * * *");
    bosses.push(boss);
  }
  await new Promise((r) => setTimeout(r, minutes * 60_000 + 5_000));
  const counts = new Map<string, number>();
  for (let more = true; more;) {
    const jobs = await bosses[0].fetch(QUEUE, { batchSize: 100, includeMetadata: true });
    more = jobs.length > 0;
    for (const job of jobs) {
      const slot = job.createdOn.toISOString().slice(0, 16);
      counts.set(slot, (counts.get(slot) ?? 0) + 1);
    }
  }
  const rows = [...counts].sort();
  console.log(`jobs per minute slot over ${minutes} min with two instances:`);
  for (const [slot, n] of rows) console.log(`  ${slot}  ${n}`);
  console.log(rows.every(([, n]) => n === 1) ? "one job per slot" : "DUPLICATES");
} finally {
  for (const boss of bosses) await boss.stop({ graceful: false }).catch(() => {});
  await pg.stop();
  await Deno.remove(dir, { recursive: true }).catch(() => {});
}
