/// <reference lib="dom" />
import type { Role } from "../session.ts";

export function SupervisorScreen(_props: { id?: string; role?: Role }) {
  return (
    <section>
      <h1>supervisor</h1>
    </section>
  );
}
