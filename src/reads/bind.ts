/**
 * The binder: a request's roots into the key of their statement's shape and the values to bind,
 * without compiling. The text of a statement depends only on the shape (kinds, fields, which page
 * arguments are present, response keys) and the actor's role, so ./plan.ts compiles it once per key;
 * every request then only walks its roots here. The binder takes the values in the order the
 * compiler (./compile.ts, ./compile_page.ts) takes them; ./plan.ts checks that they agree.
 */
import type { ActorContext } from "../context.ts";
import type { PageRequest, PageShape, Root, Selection } from "./selection.ts";
import { maxPageOf, pageWindow } from "./page_window.ts";
import { rowId, stepsOf } from "./read_path.ts";

function bindSelection(selection: Selection, key: string[], values: unknown[]) {
  for (const s of selection) {
    if ("field" in s) {
      key.push(`f${s.key}:${s.field}`);
      if (s.of) {
        key.push(`{${s.of.map((p) => "field" in p ? `f${p.key}:${p.field}` : `c${p.key}:${p.constant}`)}}`);
      }
    } else if ("constant" in s) key.push(`c${s.key}:${s.constant}`);
    else if ("page" in s) {
      key.push(`p${s.key}:${s.relation}(`);
      bindPage(s.page, s.shape, key, values);
      key.push(")");
    } else {
      key.push(`r${s.key}:${s.relation}(`);
      bindSelection(s.selection, key, values);
      key.push(")");
    }
  }
}

function bindPage(req: PageRequest, shape: PageShape, key: string[], values: unknown[]) {
  if (shape.kind === "array") {
    key.push("array(");
    bindSelection(shape.node, key, values);
    key.push(")");
    return;
  }
  const w = pageWindow(req, maxPageOf(shape));
  key.push(
    `${w.backward ? "b" : "f"}${w.cursor ? "c" : ""}${w.hasAfter ? "A" : ""}${w.hasBefore ? "B" : ""}${
      w.hasLast ? "L" : ""
    }`,
  );
  if (w.cursor) values.push(w.cursor.at.getTime(), w.cursor.id);
  values.push(w.size);
  for (const name of Object.keys(req.where ?? {}).sort()) {
    key.push(`w:${name}`);
    values.push(req.where![name]);
  }
  if (shape.kind === "rest") {
    key.push("rest(");
    bindSelection(shape.node, key, values);
    key.push(")");
    return;
  }
  for (const p of shape.parts) {
    if ("constant" in p) key.push(`C${p.key}:${p.constant}`);
    else if ("pageInfo" in p) {
      key.push(`I${p.key}(${p.pageInfo.map((i) => `${i.key}:${"info" in i ? i.info : `'${i.constant}`}`)})`);
    } else {
      key.push(`E${p.key}(`);
      for (const e of p.edges) {
        if ("constant" in e) key.push(`C${e.key}:${e.constant}`);
        else if ("cursor" in e) key.push(`K${e.key}`);
        else {
          key.push(`N${e.key}(`);
          bindSelection(e.node, key, values);
          key.push(")");
        }
      }
      key.push(")");
    }
  }
}

/** The shape key of `roots` for the actor, and the values their statement binds, the caller's first. */
export function bind(ctx: ActorContext, roots: readonly Root[]): { key: string; values: unknown[] } {
  const key: string[] = [ctx.actor.role];
  // The caller's parameters (./compile.ts CALLER).
  const values: unknown[] = [ctx.actor.workspaceId, ctx.actor.userId];
  for (const root of roots) {
    if ("view" in root) {
      key.push(`W${root.key}:${root.view.name}(`);
      values.push(rowId(root.id));
      bindSelection(root.selection, key, values);
    } else {
      key.push(`R${root.key}:${root.read.name}(`);
      for (const step of stepsOf(root.read)) values.push(rowId(root.params[step.idParam]));
      if ("page" in root) bindPage(root.page, root.shape, key, values);
      else bindSelection(root.selection, key, values);
    }
    key.push(")");
  }
  return { key: key.join("\u0001"), values };
}
