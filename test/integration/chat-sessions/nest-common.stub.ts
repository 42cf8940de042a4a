/**
 * @nestjs/common 12 ships ESM only, which Jest cannot require on Node 20. Store-level tests construct the
 * services by hand, so the decorators they import only need to exist.
 */
const noopDecorator = () => () => undefined;
export const Injectable = noopDecorator;
export const Inject = noopDecorator;
export const Optional = noopDecorator;
export const Module = noopDecorator;
