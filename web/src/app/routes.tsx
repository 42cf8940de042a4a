import { lazy, type ComponentType, type LazyExoticComponent } from 'react';
import type { Scope } from './hecate';

/**
 * The console's pages. Each page folder's index.tsx default-exports its component; it is loaded when first visited
 * (the first load carries the shell only). A page reads its path parameters with wouter's `useParams()`
 * (`sessionId` under /chat/:sessionId, `taskId` under /tasks/:taskId) and navigates with `useLocation()` or `<Link>`.
 *
 * `scope` is what the page's reads need: a caller without it is not offered the page (docs/security.md, "Who is
 * trusted"). Controls that need `admin` check `useCaller().can('admin')` inside the page.
 *
 * The server serves the page at exactly these paths (src/core/http/web-console.ts, CONSOLE_UI_PATHS): a new path here
 * is a new path there.
 */
export interface ConsolePage {
  /** The nav entry's target. */
  href: string;
  label: string;
  /** Paths the page answers (wouter patterns). */
  paths: string[];
  scope: Scope;
  Component: LazyExoticComponent<ComponentType>;
}

export const PAGES: ConsolePage[] = [
  {
    href: '/chat',
    label: 'Agent Chat',
    paths: ['/chat', '/chat/:sessionId'],
    scope: 'operator',
    Component: lazy(() => import('../pages/agent-chat')),
  },
  { href: '/tasks', label: 'Tasks', paths: ['/tasks', '/tasks/:taskId'], scope: 'operator', Component: lazy(() => import('../pages/tasks')) },
  { href: '/providers', label: 'Providers', paths: ['/providers'], scope: 'operator', Component: lazy(() => import('../pages/providers')) },
  { href: '/usage', label: 'Usage and costs', paths: ['/usage'], scope: 'operator', Component: lazy(() => import('../pages/usage')) },
  { href: '/system', label: 'Keys and system', paths: ['/system'], scope: 'operator', Component: lazy(() => import('../pages/system')) },
];

/** The first page the caller may open (where `/` and a fresh sign-in lead), or undefined when there is none. */
export const homeFor = (can: (scope: Scope) => boolean): string | undefined => PAGES.find((p) => can(p.scope))?.href;
