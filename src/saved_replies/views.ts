/** The readable type of src/saved_replies (see shared/view.ts). */
import { declaredType } from "../shared/view.ts";

/** A saved reply: declared with Pothos (src/graphql/types/saved_replies.ts). */
export const savedReplyView = declaredType("SavedReply");
