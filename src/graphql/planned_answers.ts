/**
 * A Pothos plugin: a field of an object type reads a planned answer (src/reads/planned.ts) by its
 * response key, and anything else through the field's declared resolver (plugin-prisma's for a
 * Prisma row): one declaration serves the read planner's answers and any other value (a login's
 * user).
 */
import SchemaBuilder, { BasePlugin, type PothosOutputFieldConfig, type SchemaTypes } from "@pothos/core";
import type { GraphQLFieldResolver } from "graphql";
import { isPlanned } from "../reads/planned.ts";

const PLUGIN = "plannedAnswers";

export class PlannedAnswersPlugin<Types extends SchemaTypes> extends BasePlugin<Types> {
  override wrapResolve(
    resolver: GraphQLFieldResolver<unknown, Types["Context"], object>,
    fieldConfig: PothosOutputFieldConfig<Types>,
  ): GraphQLFieldResolver<unknown, Types["Context"], object> {
    // Fields of object types (plugin-prisma's prismaObject fields are of kind PrismaObject).
    if (fieldConfig.graphqlKind !== "Object") return resolver;
    return (parent, args, context, info) =>
      isPlanned(parent) ? parent[info.path.key] : resolver(parent, args, context, info);
  }
}

declare global {
  export namespace PothosSchemaTypes {
    export interface Plugins<Types extends SchemaTypes> {
      plannedAnswers: PlannedAnswersPlugin<Types>;
    }
  }
}

SchemaBuilder.registerPlugin(PLUGIN, PlannedAnswersPlugin);

export default PLUGIN;
