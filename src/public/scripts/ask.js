// The Ask page: sends the form to the API (fast path, deliberation, council) and renders the answers.
// Served as it is (src/public/); loaded by a classic script tag where the inline script was.
(() => {
  const form = document.getElementById('ask-form');
  const out = document.getElementById('ask-out');
  const delibOut = document.getElementById('delib-out');
  const input = document.getElementById('q');
  const delibButton = document.getElementById('deliberate');
  if (!form || !out || !input || !window.fetch) return;
  const el = (tag, attrs, ...kids) => {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    for (const kid of kids) if (kid != null && kid !== false) node.append(kid);
    return node;
  };
  const isAtlas = (id) => /-[DL]\d+$/.test(id);
  const titles = new Map();
  const page = (r) => (r.role === 'divergence' ? '/atlas/' : '/works/') + encodeURIComponent(r.id) + '/';
  const errorText = (body, res) => (body && body.error && (body.error.message || body.error.code)) || (body && body.message) || 'HTTP ' + res.status;
  const setJsonTwin = (href) => {
    for (const a of document.querySelectorAll('a[data-twin="json"]')) a.href = href;
  };
  const versus = (t) =>
    el(
      'div',
      { class: 'versus' },
      el('p', { class: 'side side-a' }, el('span', { class: 'voice key-a' }, t.voice_a), t.claim_a),
      el('span', { class: 'vs', 'aria-label': 'versus' }, 'vs'),
      el('p', { class: 'side side-b' }, el('span', { class: 'voice key-b' }, t.voice_b), t.claim_b),
    );

  async function run(q) {
    const url = '/api/query?format=context&q=' + encodeURIComponent(q);
    out.replaceChildren(el('p', { class: 'muted' }, 'Searching…'));
    let body;
    try {
      const res = await fetch(url, { headers: { accept: 'application/json' } });
      body = await res.json();
      if (!res.ok) throw new Error(errorText(body, res));
    } catch (err) {
      out.replaceChildren(
        el('p', { class: 'notice', role: 'alert' }, 'The query failed: ' + err.message + '. ', el('a', { href: url }, 'Open the raw response')),
      );
      return;
    }
    setJsonTwin(url);
    for (const r of body.records || []) titles.set(r.id, r.title);
    const kids = [el('h2', {}, 'Receipt')];
    if (body.question_received !== q)
      kids.push(el('p', { class: 'notice', role: 'alert' }, 'Warning: question_received differs from what you sent; treat this response as invalid.'));
    const rc = body.receipt || {};
    kids.push(el('p', {}, el('span', { class: 'badge' }, 'verdict: ' + (rc.verdict == null ? 'null' : rc.verdict)), ' ', rc.what_the_corpus_added || ''));
    if (rc.strongest_match)
      kids.push(
        el(
          'p',
          { class: 'meta' },
          'Strongest match: ' +
            rc.strongest_match.title +
            ' (' +
            rc.strongest_match.id +
            ', similarity ' +
            Number(rc.strongest_match.similarity).toFixed(2) +
            ')',
        ),
      );
    if (rc.divergence_surfaced && rc.divergence_surfaced.length) {
      kids.push(el('h3', {}, 'Tensions surfaced'));
      kids.push(
        el(
          'ul',
          {},
          ...rc.divergence_surfaced.map((t) =>
            el(
              'li',
              {},
              el('strong', {}, t.topic),
              ': ' + t.voice_a + ' (“' + t.claim_a + '”) vs ' + t.voice_b + ' (“' + t.claim_b + '”), ' + t.status + ' · ',
              el('a', { href: '/atlas/' + encodeURIComponent(t.record_id) + '/' }, t.record_id),
            ),
          ),
        ),
      );
    }
    if (rc.caveat) kids.push(el('p', { class: 'muted' }, rc.caveat));
    const recs = body.records || [];
    kids.push(el('h2', {}, 'Records (' + recs.length + ')'));
    if (!recs.length) kids.push(el('p', {}, 'No record passed the relevance floor. That is a valid result: any answer rests on general reasoning.'));
    kids.push(
      el(
        'ol',
        { class: 'list', id: 'ask-records' },
        ...recs.map((r) =>
          el(
            'li',
            { class: 'card' },
            // An Atlas title always ends in "…" (spec §2.1); after a question mark the question is whole, so no ellipsis is shown.
            // The excerpt of an Atlas record quotes its first answer: name that voice (the first of contributors).
            el('h3', {}, el('a', { href: page(r) }, r.role === 'divergence' ? r.title.replace(/([?.!])…$/, '$1') : r.title)),
            el(
              'p',
              { class: 'meta' },
              el('code', {}, r.id),
              el('span', { class: 'badge ring' }, 'ring: ' + r.ring),
              el('span', { class: 'badge evidence' }, 'evidence: ' + r.evidence),
              el('span', {}, (r.contributors || []).join(', ')),
              el('span', {}, r.date),
              el('span', {}, 'score ' + Number(r.relevanceScore).toFixed(3)),
            ),
            el(
              'p',
              {},
              ...(r.role === 'divergence' && r.contributors && r.contributors[0]
                ? [el('strong', {}, r.contributors[0] + ': '), r.excerpt || '']
                : [r.excerpt || '']),
            ),
          ),
        ),
      ),
    );
    kids.push(el('p', { class: 'meta' }, el('a', { href: url }, 'This response as JSON')));
    out.replaceChildren(...kids);
  }

  // Deliberation: offered only when the running service says a live panel is wired.
  let job = 0;
  const voiceCard = (v) =>
    el(
      'article',
      { class: 'card answer', 'data-voice': v.name },
      el(
        'header',
        {},
        el('h4', {}, v.name),
        el(
          'p',
          { class: 'meta' },
          el('code', {}, v.model_id || ''),
          v.lab ? el('span', {}, v.lab) : null,
          v.status !== 'answered' ? el('span', { class: 'badge stale' }, v.status + (v.failure ? ': ' + v.failure : '')) : null,
        ),
      ),
      el('pre', { class: 'verbatim' }, v.answer || v.message || ''),
    );
  function showDeliberation(result, pollUrl) {
    const kids = [el('h2', {}, 'Deliberation')];
    kids.push(el('h3', {}, 'Answer'), el('pre', { class: 'verbatim card', id: 'delib-answer' }, result.answer || ''));
    const card = result.deliberationCard || {};
    if (card.epistemic_status) kids.push(el('p', { class: 'muted' }, 'Epistemic status: ' + card.epistemic_status));
    const tensions = result.tensions || [];
    kids.push(el('h3', {}, 'Tensions (' + tensions.length + ')'));
    kids.push(
      tensions.length
        ? el(
            'ol',
            { class: 'tensions', id: 'delib-tensions' },
            ...tensions.map((t) =>
              el(
                'li',
                { class: 'card' },
                el('h4', {}, t.topic),
                el('p', { class: 'meta' }, el('span', { class: 'badge status' }, 'status: ' + t.status)),
                versus(t),
              ),
            ),
          )
        : el('p', {}, 'The chair named no tension.'),
    );
    const sources = result.sources || [];
    kids.push(el('h3', {}, 'Sources (' + sources.length + ')'));
    kids.push(
      sources.length
        ? el(
            'ul',
            { id: 'delib-sources' },
            ...sources.map((id) =>
              el(
                'li',
                {},
                el('a', { href: (isAtlas(id) ? '/atlas/' : '/works/') + encodeURIComponent(id) + '/' }, titles.get(id) || id),
                titles.has(id) ? ' (' + id + ')' : null,
              ),
            ),
          )
        : el('p', {}, 'No corpus record was retrieved for this question.'),
    );
    const panel = result.panel || [];
    if (panel.length) {
      kids.push(el('h3', {}, 'The panel, verbatim'));
      kids.push(el('div', { class: 'answers' }, ...panel.map(voiceCard)));
    }
    kids.push(el('p', { class: 'meta' }, el('a', { href: pollUrl }, 'This deliberation as JSON')));
    delibOut.replaceChildren(...kids);
  }

  // Server-Sent Events over fetch (EventSource cannot POST): each stage as it happens.
  async function deliberate(q) {
    if (!window.ReadableStream || !window.TextDecoder) {
      deliberateByPolling(q);
      return;
    }
    const mine = ++job;
    const line = el('p', { role: 'status', id: 'delib-status' }, 'Sending the question to the panel…');
    const voices = el('div', { class: 'answers', id: 'delib-voices' });
    delibOut.replaceChildren(
      el('h2', {}, 'Deliberation'),
      line,
      el('progress', { 'aria-label': 'Deliberation progress' }),
      el('h3', {}, 'Voices so far'),
      voices,
    );
    delibButton.disabled = true;
    const fail = (message) => {
      if (mine !== job) return;
      delibOut.replaceChildren(
        el('h2', {}, 'Deliberation'),
        el('p', { class: 'notice', role: 'alert', id: 'delib-error' }, 'The deliberation failed: ' + message + '. The fast-path records below still stand.'),
      );
      delibButton.disabled = false;
    };
    let res;
    try {
      res = await fetch('/api/query', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({ query: q }),
      });
    } catch (err) {
      fail(err.message);
      return;
    }
    if (!res.ok || !/^text\/event-stream/.test(res.headers.get('content-type') || '') || !res.body) {
      let body = null;
      try {
        body = await res.json();
      } catch {
        /* not JSON */
      }
      fail(errorText(body, res));
      return;
    }
    let answered = 0;
    let finished = false;
    const onEvent = (event, data) => {
      if (event === 'stage' && data.stage === 'retrieval')
        line.textContent = 'Retrieved ' + (data.sources || []).length + ' source(s); the panel is answering…';
      if (event === 'stage' && data.stage === 'voice') {
        if (data.status === 'answered') answered++;
        voices.append(voiceCard(data));
        line.textContent = answered + ' voice(s) answered so far…';
      }
      if (event === 'stage' && data.stage === 'chair')
        line.textContent =
          data.status === 'started'
            ? 'The chair is naming the tensions between ' + data.voices_answered + ' answers…'
            : 'The chair has ' + (data.status === 'done' ? 'answered.' : 'failed; the answers stand on their own.');
      if (event === 'result') {
        finished = true;
        delibButton.disabled = false;
        showDeliberation(data, URL.createObjectURL(new Blob([JSON.stringify(data, null, 2)], { type: 'application/json' })));
      }
      if (event === 'error') {
        finished = true;
        fail((data.error && (data.error.message || data.error.code)) || 'the run failed');
      }
    };
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (mine !== job) {
          reader.cancel();
          return;
        }
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        for (let cut = buffer.indexOf('\n\n'); cut >= 0; cut = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          let event = 'message';
          let data = '';
          for (const row of block.split('\n')) {
            if (row.startsWith('event: ')) event = row.slice(7);
            else if (row.startsWith('data: ')) data += row.slice(6);
          }
          if (data) onEvent(event, JSON.parse(data));
        }
      }
    } catch (err) {
      fail(err.message);
      return;
    }
    if (!finished) fail('the connection closed before the result arrived');
  }

  async function deliberateByPolling(q) {
    const mine = ++job;
    const started = Date.now();
    const progress = el('progress', { 'aria-label': 'Deliberation progress' });
    const line = el('p', { role: 'status', id: 'delib-status' }, 'Submitting the question to the panel…');
    delibOut.replaceChildren(el('h2', {}, 'Deliberation'), line, progress);
    delibButton.disabled = true;
    const fail = (message, href) => {
      delibOut.replaceChildren(
        el('h2', {}, 'Deliberation'),
        el(
          'p',
          { class: 'notice', role: 'alert', id: 'delib-error' },
          'The deliberation failed: ' + message + '. ',
          href ? el('a', { href }, 'Open the raw response') : null,
          href ? '. ' : '',
          'The fast-path records below still stand.',
        ),
      );
      delibButton.disabled = false;
    };
    let body;
    const submitUrl = '/api/query?async=1&q=' + encodeURIComponent(q);
    try {
      const res = await fetch(submitUrl, { headers: { accept: 'application/json' } });
      body = await res.json();
      if (!res.ok) throw new Error(errorText(body, res));
    } catch (err) {
      fail(err.message, submitUrl);
      return;
    }
    const pollUrl = body.poll_url;
    let wait = Math.max(1, Number(body.poll_after_seconds) || 3) * 1000;
    const tick = async () => {
      if (mine !== job) return;
      let state;
      try {
        const res = await fetch(pollUrl, { headers: { accept: 'application/json' } });
        state = await res.json();
        if (!res.ok) throw new Error(errorText(state, res));
      } catch (err) {
        fail(err.message, pollUrl);
        return;
      }
      if (mine !== job) return;
      if (state.status === 'done') {
        delibButton.disabled = false;
        showDeliberation(state, pollUrl);
        return;
      }
      if (state.status === 'failed' || state.status === 'cancelled') {
        fail((state.error && (state.error.message || state.error.code)) || 'the job ' + state.status, pollUrl);
        return;
      }
      const seconds = Math.round((Date.now() - started) / 1000);
      line.textContent =
        'Status: ' + state.status + ' · ' + seconds + ' s elapsed (a deliberation takes about 25 s). Checking again every ' + wait / 1000 + ' s.';
      wait = Math.max(1, Number(state.poll_after_seconds) || wait / 1000) * 1000;
      setTimeout(tick, wait);
    };
    line.textContent = 'Status: ' + body.status + '. Checking again every ' + wait / 1000 + ' s.';
    setTimeout(tick, wait);
  }

  form.addEventListener('submit', (event) => {
    const q = input.value;
    if (!q.trim()) return;
    event.preventDefault();
    history.replaceState(null, '', '?q=' + encodeURIComponent(q));
    run(q);
  });
  if (delibButton && delibOut) {
    delibButton.addEventListener('click', () => {
      const q = input.value;
      if (!q.trim()) {
        input.reportValidity();
        return;
      }
      history.replaceState(null, '', '?q=' + encodeURIComponent(q));
      run(q);
      deliberate(q);
    });
    fetch('/api/health', { headers: { accept: 'application/json' } })
      .then((res) => (res.ok ? res.json() : null))
      .then((health) => {
        if (!health || !health.capabilities || health.capabilities.deliberation !== true) return;
        delibButton.hidden = false;
        const note = document.getElementById('deliberate-note');
        if (note) note.hidden = false;
      })
      .catch(() => {
        /* no panel: the fast path alone */
      });
  }
  const initial = new URLSearchParams(location.search).get('q');
  if (initial) {
    input.value = initial;
    run(initial);
  }
})();
