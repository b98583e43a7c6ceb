/** Entry point of `npm start` / `npm run serve`: load the artifacts, serve API and site. */
import { createApp } from './app.ts';
import { loadConfig } from './config.ts';
import { ArtifactsMissingError, loadCorpus } from './load-artifacts.ts';
import { createUseLiteEmbedder, withQueryCache } from './providers/embedder.ts';

async function main(): Promise<void> {
  const started = Date.now();
  const config = loadConfig();
  const embedder = withQueryCache(await createUseLiteEmbedder());
  let corpus;
  try {
    corpus = await loadCorpus(config.artifactsDir, embedder);
  } catch (error) {
    if (error instanceof ArtifactsMissingError) {
      console.error(`[server] ${error.message}`);
      process.exit(1);
    }
    throw error;
  }
  const app = createApp({ corpus, siteDir: config.siteDir });
  const server = app.listen(config.port, config.host, () => {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    console.log(
      `[server] ${corpus.site.name}: ${corpus.works.length} works, ${corpus.divergences.length} Atlas records, ` +
        `listening on http://${config.host}:${port} (ready in ${Date.now() - started} ms)`,
    );
  });
  const shutdown = () => server.close(() => process.exit(0));
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}

void main();
