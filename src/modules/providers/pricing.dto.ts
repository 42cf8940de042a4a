import { IsInt, IsOptional, Max, Min } from 'class-validator';

const MAX = 1_000_000_000_000;

export class PutPriceDto {
  @IsInt() @Min(0) @Max(MAX) input_micros_usd_per_million_tokens!: number;
  @IsInt() @Min(0) @Max(MAX) output_micros_usd_per_million_tokens!: number;
  @IsOptional() @IsInt() @Min(0) @Max(MAX) cached_input_micros_usd_per_million_tokens?: number;
}
