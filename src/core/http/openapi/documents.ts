/**
 * Compile-time proof that a documented response class describes what a mapper or service really returns: the same
 * keys, and every returned value assignable to its documented type. A drift between the OpenAPI document and the wire
 * fails the type check and `nest build`, naming the keys that differ:
 *
 *   type _TaskDocumented = Assert<Documents<TaskResponseDto, ReturnType<typeof toTaskResponse>>>;
 */
export type Documents<Doc, Wire> = [Wire] extends [Doc]
  ? [Exclude<Keys<Wire>, keyof Doc>, Exclude<keyof Doc, Keys<Wire>>] extends [never, never]
    ? true
    : { undocumented: Exclude<Keys<Wire>, keyof Doc>; notReturned: Exclude<keyof Doc, Keys<Wire>> }
  : { notAssignableTo: Doc };

export type Assert<T extends true> = T;

/** What a (service) method resolves to: `Returned<TasksService['get']>`. */
export type Returned<F> = F extends (...args: never[]) => infer R ? Awaited<R> : never;

/**
 * The named keys of every member of a union (a mapper that returns one of several shapes); an index signature (a
 * message's provider-specific extras) is the schema's `additionalProperties`, not a key.
 */
type Keys<T> = T extends unknown ? keyof { [K in keyof T as string extends K ? never : number extends K ? never : K]: T[K] } : never;
