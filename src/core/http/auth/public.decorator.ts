import { SetMetadata } from '@nestjs/common';

export const IS_PUBLIC = 'hecate:public';
/** Route needs no credential (liveness, readiness, metrics). */
export const Public = (): MethodDecorator & ClassDecorator => SetMetadata(IS_PUBLIC, true);
