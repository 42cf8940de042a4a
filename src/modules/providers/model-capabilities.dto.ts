import { IsBoolean, IsIn, IsInt, IsOptional, IsString, Length, Max, Min } from 'class-validator';

export class CapabilityOverrideDto {
  @IsString() @Length(1, 128) provider!: string;
  @IsString() @Length(1, 256) model!: string;
  @IsIn(['none', 'basic', 'parallel'], { message: 'tool_calling must be none, basic or parallel' }) tool_calling!: 'none' | 'basic' | 'parallel';
  @IsOptional() @IsBoolean() streaming?: boolean;
  @IsOptional() @IsInt() @Min(1) @Max(100_000_000) max_context_tokens?: number;
  @IsOptional() @IsIn(['unknown', 'none', 'supported']) image_input?: 'unknown' | 'none' | 'supported';
  /** The model continues a trailing (prefilled) assistant message instead of answering anew (see docs/takeover.md). */
  @IsOptional() @IsBoolean() assistant_prefill?: boolean;
  @IsOptional() @IsString() @Length(0, 2000) note?: string;
}

export class CapabilityProbeDto {
  @IsString() @Length(1, 128) provider!: string;
  @IsString() @Length(1, 256) model!: string;
  @IsOptional() @IsIn(['none', 'basic', 'parallel'], { message: 'tool_calling must be none, basic or parallel' }) tool_calling?: 'none' | 'basic' | 'parallel';
  @IsOptional() @IsBoolean() streaming?: boolean;
  @IsOptional() @IsInt() @Min(1) @Max(100_000_000) max_context_tokens?: number;
  @IsOptional() @IsIn(['unknown', 'none', 'supported']) image_input?: 'unknown' | 'none' | 'supported';
  /** The model continues a trailing (prefilled) assistant message instead of answering anew (see docs/takeover.md). */
  @IsOptional() @IsBoolean() assistant_prefill?: boolean;
  @IsOptional() @IsString() @Length(0, 2000) note?: string;
}

export class CapabilityKeyQuery {
  @IsString() @Length(1, 128) provider!: string;
  @IsString() @Length(1, 256) model!: string;
}
