import type { Locator, Page } from 'playwright-core';

/** What the Agent Chat browser suites share: their operator token, and how they read the transcript. */
export const TOKEN = 'console-chat-operator-token-0123456789';

/** `n` unique words (`w00 w01 …`): a reply whose every token can be counted on the page. */
export const words = (n: number, tag = 'w'): string => Array.from({ length: n }, (_, i) => `${tag}${String(i).padStart(2, '0')} `).join('');

/** The tokens of `tag` in a text, in order: a repeated or lost token shows as a sequence that is not 0, 1, 2, … */
export const tokensIn = (text: string, tag = 'w'): number[] => [...text.matchAll(new RegExp(`${tag}(\\d\\d) `, 'g'))].map((m) => Number(m[1]));

export const expectInOrderOnce = (tokens: number[]) => expect(tokens).toEqual(tokens.map((_, i) => i));

/** The transcript's message articles (named "<who>, <status>"). */
export const assistantReply = (page: Page, status?: string): Locator =>
  page.getByRole('region', { name: 'Transcript' }).getByRole('article', { name: status ? `Assistant, ${status}` : /^Assistant, / });
