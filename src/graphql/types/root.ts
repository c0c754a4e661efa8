/** The root operation types; each domain file adds its fields with queryField(s)/mutationField(s). */
import { builder } from "../builder.ts";

builder.queryType({});
builder.mutationType({});
