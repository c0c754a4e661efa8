/// <reference lib="dom" />
import type { Role } from "../session.ts";

export function ApprovalsScreen(_props: { id?: string; role?: Role }) {
  return (
    <section>
      <h1>approvals</h1>
    </section>
  );
}
