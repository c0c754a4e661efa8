/**
 * What a GraphQL field passes to a service (the Pothos `query`): the include/select of the nested
 * fields asked for and, for connections, take/skip/cursor. The service spreads it into its Prisma
 * call after authorizing, and sets `where` and `orderBy` itself, so nested relations load in one
 * round trip without bypassing authorization or workspace scoping.
 */
export interface GraphQuery<Select, Include, Cursor> {
  select?: Select | null;
  include?: Include | null;
  take?: number;
  skip?: number;
  cursor?: Cursor;
}
