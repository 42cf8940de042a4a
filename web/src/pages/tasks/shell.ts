/**
 * What the Tasks page takes from the console shell: the tab's client (web/src/app/hecate.tsx) and the router
 * (wouter, web/src/app/routes.tsx). The one file to change if the shell moves them.
 */
export { useHecate } from '../../app/hecate';
export { Link, useLocation, useParams } from 'wouter';
