import { DynamicModule, Global, Module } from '@nestjs/common';
import { AppConfig } from './app-config';
import type { AppConfigValues } from './config.loader';

@Global()
@Module({})
export class ConfigModule {
  static forRoot(values: AppConfigValues): DynamicModule {
    return { module: ConfigModule, providers: [{ provide: AppConfig, useValue: values }], exports: [AppConfig] };
  }
}
