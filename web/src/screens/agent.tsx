/// <reference lib="dom" />
import type { Role } from "../session.ts";

export function AgentScreen(_props: { id?: string; role?: Role }) {
  return (
    <section>
      <h1>agent</h1>
    </section>
  );
}
