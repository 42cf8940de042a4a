import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { DatabaseModule } from '@core/database/database.module';
import { ApiKeyEntity } from './api-key.entity';
import { ApiKeyRepository } from './api-key.repository';
import { ApiKeyService } from './api-key.service';
import { AuthGuard } from './auth.guard';
import { AuthenticationService } from './authentication.service';

/** Imported by ApiModule only: the guard applies to every HTTP route. */
@Module({
  imports: [DatabaseModule.forFeature([ApiKeyEntity])],
  providers: [ApiKeyRepository, ApiKeyService, AuthenticationService, { provide: APP_GUARD, useClass: AuthGuard }],
  exports: [ApiKeyService, AuthenticationService],
})
export class AuthModule {}
