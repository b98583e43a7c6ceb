// The Atlas list: filters and sorts the server-rendered records in place (the page works without it).
// Served as it is (src/public/); loaded by a classic script tag where the inline script was.
(() => {
  const root = document.getElementById('atlas');
  const list = document.getElementById('atlas-list');
  const form = document.getElementById('atlas-search');
  const input = document.getElementById('atlas-q');
  const clear = document.getElementById('atlas-clear');
  const status = document.getElementById('atlas-status');
  if (!root || !list || !form || !input || !status || !window.fetch || !history.pushState) return;
  const empty = document.getElementById('atlas-empty');
  if (empty) empty.remove();
  const state = {
    tier: root.dataset.tier || '',
    fresh: root.dataset.fresh || '',
    voice: root.dataset.voice || '',
    theme: root.dataset.theme || '',
    q: '',
    ids: null,
  };
  const TIERS = ['C0', 'C1', 'C2', 'C3'];
  const FRESH = ['current', 'stale'];
  const items = () => [...list.querySelectorAll('li[data-id]')];
  const path = (tier, fresh) => '/atlas/' + (tier ? 'tier/' + tier + '/' : '') + (fresh ? fresh + '/' : '');
  const url = () =>
    (state.voice || state.theme ? location.pathname : path(state.tier, state.fresh)) + (state.q ? '?search=' + encodeURIComponent(state.q) : '');
  const facetMatch = (members) =>
    (members || '').split(' ').some((m) => {
      const [tier, fresh] = m.split(':');
      return (!state.tier || tier === state.tier) && (!state.fresh || fresh === state.fresh);
    });
  const hasIn = (list, ids) => !ids || (list || '').split(' ').some((id) => ids.has(id));
  const words = () =>
    [
      state.voice && 'voice ' + state.voice,
      state.theme && 'theme ' + state.theme,
      state.tier && 'tier ' + state.tier,
      state.fresh && (state.fresh === 'stale' ? 'stale records' : 'records with current models only'),
      state.q && 'matching “' + state.q + '”',
    ].filter(Boolean);
  let seq = 0;

  function render() {
    let shown = 0;
    for (const li of items()) {
      const d = li.dataset;
      const ok =
        facetMatch(d.members) &&
        (!state.voice || (d.voices || '').split('|').includes(state.voice)) &&
        (!state.theme || (d.themes || '').split('|').includes(state.theme)) &&
        hasIn(d.ids, state.ids);
      li.hidden = !ok;
      if (ok) shown++;
    }
    for (const a of root.querySelectorAll('a[data-dim]')) {
      const tier = a.dataset.dim === 'tier' ? a.dataset.value : state.tier;
      const fresh = a.dataset.dim === 'fresh' ? a.dataset.value : state.fresh;
      a.href = path(tier, fresh);
      if ((a.dataset.dim === 'tier' ? state.tier : state.fresh) === a.dataset.value) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    }
    const w = words();
    const n = shown + (shown === 1 ? ' question' : ' questions');
    status.replaceChildren(w.length ? 'Showing ' + n + ': ' + w.join(', ') + '. ' : 'Showing all ' + n + '.');
    if (w.length) {
      const all = document.createElement('a');
      all.href = '/atlas/';
      all.textContent = 'Show all questions';
      all.addEventListener('click', (event) => {
        if (plain(event)) {
          event.preventDefault();
          set({ tier: '', fresh: '', voice: '', theme: '', q: '' });
        }
      });
      status.append(all, '.');
    }
    if (w.length && shown === 0) status.append(' No question matches.');
    clear.hidden = !state.q;
    document.title = document.title.replace(/^[^·]*/, (w.length ? 'Divergence Atlas: ' + w.join(', ') : 'Divergence Atlas') + ' ');
  }

  async function search() {
    const q = state.q.trim();
    const mine = ++seq;
    if (!q) {
      state.ids = null;
      render();
      return;
    }
    status.textContent = 'Searching…';
    try {
      const res = await fetch('/api/divergences?search=' + encodeURIComponent(q), { headers: { accept: 'application/json' } });
      const body = await res.json();
      if (!res.ok) throw new Error((body.error && body.error.message) || 'HTTP ' + res.status);
      if (mine !== seq) return;
      state.ids = new Set(body.records.map((r) => r.id));
      render();
    } catch (err) {
      if (mine !== seq) return;
      state.ids = null;
      render();
      status.textContent = 'The search failed (' + err.message + '); showing the records without it.';
    }
  }

  function set(next, push = true) {
    const searchChanged = next.q !== undefined && next.q !== state.q;
    Object.assign(state, next);
    if (next.q !== undefined) input.value = state.q;
    if (push) history.pushState(null, '', url());
    if (searchChanged) search();
    else render();
  }

  const plain = (event) => !(event.metaKey || event.ctrlKey || event.shiftKey || event.altKey || event.button);
  for (const a of root.querySelectorAll('a[data-dim]')) {
    a.addEventListener('click', (event) => {
      if (!plain(event)) return;
      event.preventDefault();
      // A tier or freshness page is not a voice or theme page: choosing one leaves those.
      set(a.dataset.dim === 'tier' ? { tier: a.dataset.value, voice: '', theme: '' } : { fresh: a.dataset.value, voice: '', theme: '' });
    });
  }
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    set({ q: input.value.trim() });
  });
  let timer;
  input.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      if (input.value.trim() !== state.q) set({ q: input.value.trim() }, false);
      history.replaceState(null, '', url());
    }, 300);
  });
  clear.addEventListener('click', () => {
    set({ q: '' });
    input.focus();
  });

  function fromLocation() {
    const m = /^\/atlas\/(?:tier\/([^/]+)\/)?(?:([a-z]+)\/)?$/.exec(location.pathname) || [];
    return {
      tier: TIERS.includes(m[1]) ? m[1] : '',
      fresh: FRESH.includes(m[2]) ? m[2] : '',
      q: (new URLSearchParams(location.search).get('search') || '').trim(),
    };
  }
  window.addEventListener('popstate', () => {
    // Voice and theme pages are plain pages: going back to one loads it.
    if (/^\/atlas\/(voice|theme)\//.test(location.pathname) || state.voice || state.theme) {
      location.reload();
      return;
    }
    set(fromLocation(), false);
  });

  // Records persisted after this page was built (a live council): listed from the API, read as JSON.
  async function addRuntimeRecords() {
    try {
      const res = await fetch('/api/divergences', { headers: { accept: 'application/json' } });
      if (!res.ok) return;
      const body = await res.json();
      const known = new Set(items().flatMap((li) => (li.dataset.ids || li.dataset.id).split(' ')));
      const added = (body.records || []).filter((r) => !known.has(r.id));
      for (const r of added) {
        const li = document.createElement('li');
        li.className = 'card';
        li.dataset.id = r.id;
        li.dataset.ids = r.id;
        li.dataset.members = r.certification.tier + ':' + (r.freshness.stale ? 'stale' : 'current');
        li.dataset.voices = (r.contributors || []).join('|');
        li.dataset.themes = r.cluster || '';
        const h = document.createElement('h2');
        h.className = 'item-title';
        const a = document.createElement('a');
        a.href = '/api/divergences?id=' + encodeURIComponent(r.id);
        a.textContent = r.question;
        h.append(a);
        const meta = document.createElement('p');
        meta.className = 'meta';
        const code = document.createElement('code');
        code.textContent = r.id;
        const badge = document.createElement('span');
        badge.className = 'badge';
        badge.textContent = 'Tier ' + r.certification.tier + ' · added after this page was built (JSON only)';
        meta.append(code, ' ', r.date, ' ', badge);
        li.append(h, meta);
        list.prepend(li);
      }
      if (added.length) render();
    } catch {
      /* the static list stands */
    }
  }

  const initial = fromLocation();
  if (initial.q) {
    input.value = initial.q;
    set(initial, false);
  } else render();
  addRuntimeRecords();
})();
