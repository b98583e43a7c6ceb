/**
 * The build's feeds (issue 45, docs/CHANGES.md): /feeds/atlas.atom|json and /feeds/works.atom|json
 * rendered by core/feeds.ts from the change history, with absolute links under the site's URL.
 */
import path from 'node:path';
import { buildFeed, FEED_PATHS, renderAtom, renderJsonFeed, type FeedLookup, type FeedName } from '../../core/feeds.ts';
import type { DivergenceFull, WorkRecord } from '../../core/records.ts';
import { writeFile, writeJson } from '../../content-files/write.ts';
import type { ChangeHistory } from '../../schemas/api/changes.ts';
import type { SiteConfig } from '../../schemas/content.ts';

/** Where `npm run serve` listens: the links of a build that was told no URL, said in its log. */
export const LOCAL_BASE_URL = 'http://127.0.0.1:4321';

/** The site's absolute URL: site.yaml's base_url, else PUBLIC_BASE_URL in the build's environment, else the local server's. */
export function feedBaseUrl(site: Pick<SiteConfig, 'base_url'>, env: NodeJS.ProcessEnv): { base: string; configured: boolean } {
  const configured = site.base_url ?? env.PUBLIC_BASE_URL;
  return { base: (configured ?? LOCAL_BASE_URL).replace(/\/+$/, ''), configured: configured !== undefined };
}

export function writeFeeds(
  history: ChangeHistory,
  input: { site: SiteConfig; works: readonly WorkRecord[]; divergences: readonly DivergenceFull[]; generatedAt: string; env: NodeJS.ProcessEnv },
  publicDir: string,
  log: (line: string) => void,
): void {
  const { base, configured } = feedBaseUrl(input.site, input.env);
  if (!configured) log(`feeds: no site URL (base_url in site.yaml, or PUBLIC_BASE_URL): their links name ${LOCAL_BASE_URL}`);
  const divergences = new Map(input.divergences.map((record) => [record.id, record]));
  const works = new Map(input.works.map((work) => [work.id, work]));
  const lookup: FeedLookup = {
    divergence: (id) => {
      const record = divergences.get(id);
      if (!record) return undefined;
      return {
        title: record.question,
        ...(record.certification.evidence_url ? { evidenceUrl: record.certification.evidence_url } : {}),
        ...(record.re_elicits ? { reElicits: record.re_elicits } : {}),
      };
    },
    work: (id) => {
      const work = works.get(id);
      return work ? { title: work.title } : undefined;
    },
  };
  const site = { name: input.site.name, slug: input.site.slug, base };
  for (const name of Object.keys(FEED_PATHS) as FeedName[]) {
    const feed = buildFeed(name, history, site, lookup, input.generatedAt);
    writeFile(path.join(publicDir, FEED_PATHS[name].atom), renderAtom(feed));
    writeJson(path.join(publicDir, FEED_PATHS[name].json), renderJsonFeed(feed));
  }
}
