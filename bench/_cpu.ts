/** CPU time of processes, for benchmarks that report CPU per request. */

let clockTicks: number | undefined;

/**
 * utime + stime of process `pid` (all its threads) in ms, from /proc/<pid>/stat (fields 14 and
 * 15); 0 when the process is gone.
 */
export function cpuTimeMs(pid: number): number {
  clockTicks ??= Number(
    new TextDecoder().decode(new Deno.Command("getconf", { args: ["CLK_TCK"] }).outputSync().stdout),
  );
  let stat: string;
  try {
    stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  } catch {
    return 0;
  }
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 1000 / clockTicks;
}
