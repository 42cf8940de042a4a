/**
 * Entities declared by modules through `DatabaseModule.forFeature`. Collected while module files are
 * evaluated, before the DataSource is created (the same approach as @nestjs/typeorm autoLoadEntities),
 * so that `core/` never imports `modules/`.
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
const entities = new Set<Function>();

// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
export function registerEntities(list: Function[]): void {
  for (const entity of list) entities.add(entity);
}

// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
export function registeredEntities(): Function[] {
  return [...entities];
}
