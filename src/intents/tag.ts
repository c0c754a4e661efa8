/**
 * The tag form of an intent name: lowercase, spaces and underscores
 * turned to hyphens. `<transferir>` is the transfer-to-human tag and cannot be an intent's.
 */
export const TRANSFER_TAG = "transferir";

export function intentTag(name: string): string {
  return name.trim().toLowerCase().replace(/[\s_]+/g, "-").replace(/-+/g, "-");
}

/** Why a tag cannot be used, or null. */
export function tagProblem(tag: string): string | null {
  if (!/^[\p{Ll}\p{Lo}\p{N}][\p{Ll}\p{Lo}\p{N}.-]*$/u.test(tag)) {
    return "must give a tag of letters, digits, hyphens and dots, starting with a letter or digit";
  }
  if (tag === TRANSFER_TAG) return `"${TRANSFER_TAG}" is reserved for the transfer to a human`;
  return null;
}
