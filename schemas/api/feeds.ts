/**
 * The JSON Feed 1.1 documents the build writes beside their Atom twins (issue 45, part 2):
 * /feeds/atlas.json and /feeds/works.json (core/feeds.ts, docs/CHANGES.md). JSON Feed allows
 * extension keys beginning with an underscore, so the objects are open.
 */
import { z } from 'zod';
import { named, strings, text } from './common.ts';

const author = z.looseObject({ name: text("The commit's author (an item) or the deployment (the feed).") });

export const JsonFeedSchema = named(
  'JsonFeed',
  z
    .looseObject({
      version: z.literal('https://jsonfeed.org/version/1.1').describe('JSON Feed version 1.1.'),
      title: text('Title of the feed.'),
      home_page_url: text('The page the feed follows (absolute).'),
      feed_url: text('This feed (absolute).'),
      description: text('What the feed lists; says so when the history is unavailable or truncated.'),
      authors: z.array(author).describe('The deployment.'),
      language: text('en.'),
      items: z
        .array(
          z.looseObject({
            id: text("Stable id, the same as the Atom entry's: tag:<host>,<commit date>:<slug>/<feed>/<kind>/<record id>/<commit>."),
            url: text("The record's page (absolute)."),
            title: text('What happened, naming the record.'),
            summary: text('What changed, the commit, the evidence behind a tier, the change check’s lines.'),
            content_html: text('The same as HTML, with links.'),
            content_text: text('The same as text.'),
            date_published: text("The commit's author date (RFC 3339)."),
            date_modified: text("The commit's author date (RFC 3339)."),
            authors: z.array(author).describe("The commit's author."),
            tags: strings('added, changed or removed; tier when the tier changed; the change check’s groups.'),
            _polyphony: z
              .looseObject({
                related: z
                  .array(z.strictObject({ href: text('Absolute URL.'), title: text('What it is.') }))
                  .describe('The record as JSON, its certification evidence.'),
              })
              .describe('Links beside the page, as the Atom entry\'s rel="related" links.'),
          }),
        )
        .describe('Entries, newest first, at most 50: the whole history is at /changes/index.json.'),
    })
    .describe('A JSON Feed 1.1 of the content’s changes (/feeds/atlas.json, /feeds/works.json); the Atom feed beside it carries the same entries.'),
);
export type JsonFeed = z.infer<typeof JsonFeedSchema>;
