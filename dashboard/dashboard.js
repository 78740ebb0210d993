/*
 * Live dashboard: polls the tenant's API once a second with the key entered once (kept in
 * sessionStorage for this tab only) and draws each rule's processors, their traffic share and
 * error rate over the last five minutes (kept in this page, from the polls), failure
 * probability, bandit weight, the failover events and the change audit. Operator controls
 * (pin, drain, failover, recover, end an override) ask for confirmation first.
 * No framework, nothing fetched from elsewhere: the service serves this file.
 */
'use strict';
(function () {
  const POLL_MS = 1000;
  const HISTORY_MS = 5 * 60 * 1000;
  const history = new Map(); // rule_id -> [{t, share, errP, errS}]
  let key = sessionStorage.getItem('routing-api-key') || '';
  let timer = null;

  const $ = (id) => document.getElementById(id);
  const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
  const pct = (x) => (x === null || x === undefined ? '—' : (x * 100).toFixed(1) + '%');
  const num = (x, d = 3) => (x === null || x === undefined ? '—' : Number(x).toFixed(d));

  async function api(method, path, body) {
    const headers = { 'Content-Type': 'application/json' };
    if (key) headers['X-API-Key'] = key;
    const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    const json = text ? JSON.parse(text) : null;
    if (!res.ok) throw new Error((json && json.error && json.error.message) || res.status + ' ' + res.statusText);
    return json;
  }

  function record(ruleId, h) {
    const primaryShare = h.decision.processor_id === h.primary.processor_id ? h.decision.weight : 1 - h.decision.weight;
    let list = history.get(ruleId);
    if (!list) history.set(ruleId, (list = []));
    const now = Date.now();
    list.push({ t: now, share: h.primary.processor_id === h.secondary.processor_id ? 1 : primaryShare, errP: h.primary.error_rate, errS: h.secondary.error_rate });
    while (list.length && list[0].t < now - HISTORY_MS) list.shift();
  }

  function drawChart(canvas, list) {
    const ctx = canvas.getContext('2d');
    const w = canvas.width, hgt = canvas.height;
    ctx.clearRect(0, 0, w, hgt);
    ctx.strokeStyle = '#eef0f3';
    for (let i = 1; i < 4; i++) { ctx.beginPath(); ctx.moveTo(0, (hgt * i) / 4); ctx.lineTo(w, (hgt * i) / 4); ctx.stroke(); }
    const now = Date.now();
    // The time axis grows with the history this page has seen: 1 to 5 minutes.
    const span = list.length ? Math.min(HISTORY_MS, Math.max(60_000, now - list[0].t)) : 60_000;
    const x = (t) => w - ((now - t) / span) * w;
    const y = (v) => hgt - 2 - v * (hgt - 4);
    const line = (field, color) => {
      ctx.strokeStyle = color; ctx.lineWidth = 2; ctx.beginPath();
      list.forEach((p, i) => (i === 0 ? ctx.moveTo(x(p.t), y(p[field])) : ctx.lineTo(x(p.t), y(p[field]))));
      ctx.stroke();
    };
    if (list.length === 0) return;
    line('share', '#2563eb');
    line('errP', '#dc2626');
    line('errS', '#f59e0b');
  }

  function processorRow(p, isPrimary) {
    return `<tr data-processor="${esc(p.processor_id)}"><td>${isPrimary ? 'primary' : 'secondary'}</td><td>${esc(p.name)} <span class="muted">(${esc(p.processor_id)})</span></td>` +
      `<td><span class="status ${esc(p.status)}">${esc(p.status)}</span></td><td>${pct(p.success_rate)}</td><td>${pct(p.error_rate)}</td>` +
      `<td>${p.sample_count}</td><td>${num(p.failure_probability)}</td><td>${num(p.bandit_weight)}</td></tr>`;
  }

  function renderRule(id, h) {
    const d = h.decision;
    const ov = d.override;
    const same = h.primary.processor_id === h.secondary.processor_id;
    const ovText = ov ? `<span class="override" data-override="${esc(ov.mode)}">${esc(ov.mode)} ${esc(ov.processor_id)} (${ov.scope}) until ${esc(ov.expires_at.slice(11, 19))}Z</span>` : '';
    const actions = [
      `<button data-action="pin" data-processor="${esc(h.primary.processor_id)}">Pin ${esc(h.primary.processor_id)}</button>`,
      same ? '' : `<button data-action="pin" data-processor="${esc(h.secondary.processor_id)}">Pin ${esc(h.secondary.processor_id)}</button>`,
      same ? '' : `<button data-action="drain" data-processor="${esc(h.primary.processor_id)}">Drain ${esc(h.primary.processor_id)}</button>`,
      same ? '' : `<button data-action="drain" data-processor="${esc(h.secondary.processor_id)}">Drain ${esc(h.secondary.processor_id)}</button>`,
      ov && ov.scope === 'rule' ? '<button data-action="clear">End override</button>' : '',
      same ? '' : '<button data-action="failover">Fail over now</button>',
      '<button data-action="recover">Recover now</button>',
    ].join('');
    return `<div class="rule" data-rule="${esc(id)}"><h3>${esc(id)} <span class="muted">→ ${esc(d.processor_id)} ${pct(d.weight)} · ${esc(d.decision_source)}</span> ${ovText}</h3>` +
      `<div class="body"><table><thead><tr><th></th><th>processor</th><th>status</th><th>success</th><th>errors</th><th>samples</th><th>failure p</th><th>bandit w</th></tr></thead>` +
      `<tbody>${processorRow(h.primary, true)}${same ? '' : processorRow(h.secondary, false)}</tbody></table>` +
      `<div><canvas width="300" height="80"></canvas><div class="legend"><span style="color:#2563eb">■ primary share</span><span style="color:#dc2626">■ primary errors</span><span style="color:#f59e0b">■ secondary errors</span></div></div></div>` +
      `<div class="actions">${actions}</div></div>`;
  }

  async function act(ruleId, action, processorId) {
    const what = {
      pin: `Pin rule ${ruleId} to ${processorId} for 1 hour? All of its traffic goes there.`,
      drain: `Drain ${processorId} from rule ${ruleId} for 1 hour? None of its traffic goes there.`,
      clear: `End the override of rule ${ruleId} now?`,
      failover: `Fail rule ${ruleId} over to its secondary now?`,
      recover: `Recover the failed-over processors of rule ${ruleId} now?`,
    }[action];
    if (!window.confirm(what)) return;
    const path = '/v1/rules/' + encodeURIComponent(ruleId);
    try {
      if (action === 'pin' || action === 'drain') await api('POST', path + '/override', { mode: action, processor_id: processorId, expires_in_s: 3600, reason: 'dashboard' });
      else if (action === 'clear') await api('DELETE', path + '/override');
      else await api('POST', path + '/' + action);
      await poll();
    } catch (e) {
      $('connection').textContent = 'error: ' + e.message;
      $('connection').className = 'error';
    }
  }

  async function poll() {
    try {
      const [health, events, audit] = await Promise.all([
        api('GET', '/v1/health'),
        api('GET', '/v1/failover-events?limit=20'),
        api('GET', '/v1/audit?limit=20'),
      ]);
      $('connection').textContent = 'live · updated ' + new Date().toLocaleTimeString();
      $('connection').className = 'muted';
      $('summary').textContent = `tier ${health.tier} · engine ${health.engine_running ? 'running' : 'stopped'} · ${Object.keys(health.rules).length} rules`;
      const ids = Object.keys(health.rules).sort();
      ids.forEach((id) => record(id, health.rules[id]));
      $('rules').innerHTML = ids.map((id) => renderRule(id, health.rules[id])).join('') || '<p class="muted">no rules</p>';
      $('rules').querySelectorAll('.rule').forEach((el) => drawChart(el.querySelector('canvas'), history.get(el.dataset.rule) || []));
      $('events').innerHTML = events.map((e) => `<li data-rule="${esc(e.rule_id)}"><b>${esc(e.timestamp.slice(11, 19))}</b> ${esc(e.rule_id)}: ${esc(e.from_processor)} → ${esc(e.to_processor)} <span class="muted">${esc(e.reason)}</span></li>`).join('') || '<li class="muted">none</li>';
      $('audit').innerHTML = audit.map((a) => `<li><b>${esc(a.timestamp.slice(11, 19))}</b> ${esc(a.action)} ${esc(a.target_id || '')} <span class="muted">${esc(a.actor || 'service')}</span></li>`).join('') || '<li class="muted">none</li>';
    } catch (e) {
      $('connection').textContent = 'error: ' + e.message;
      $('connection').className = 'error';
    }
  }

  $('rules').addEventListener('click', (ev) => {
    const b = ev.target.closest('button[data-action]');
    if (!b) return;
    act(b.closest('.rule').dataset.rule, b.dataset.action, b.dataset.processor);
  });
  $('connect').addEventListener('submit', (ev) => {
    ev.preventDefault();
    key = $('api-key').value.trim();
    sessionStorage.setItem('routing-api-key', key);
    history.clear();
    clearInterval(timer);
    poll();
    timer = setInterval(poll, POLL_MS);
  });
  $('api-key').value = key;
  if (key) { poll(); timer = setInterval(poll, POLL_MS); }
})();
