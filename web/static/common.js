// Shared by every page: fetching the API, building elements whose text is
// always a text node (never markup), and the formats of figures.
//
// Nothing from the API is ever given to innerHTML: h() turns every string
// child into a text node, and attributes are set one by one.

export const API = '/api/v1';

// h('td', {class: 'hash'}, 'abc', childNode, ...): an element. Strings and
// numbers become text nodes; null and undefined are skipped; arrays are
// flattened. Attribute values are set with setAttribute, never parsed.
export function h(tag, attrs, ...children) {
	const e = document.createElement(tag);
	for (const [k, v] of Object.entries(attrs || {})) {
		if (v === null || v === undefined || v === false)
			continue;
		if (k === 'onclick')
			e.addEventListener('click', v);
		else
			e.setAttribute(k, v === true ? '' : String(v));
	}
	append(e, children);
	return e;
}

function append(e, children) {
	for (const c of children) {
		if (c === null || c === undefined)
			continue;
		if (Array.isArray(c))
			append(e, c);
		else if (c instanceof Node)
			e.appendChild(c);
		else
			e.appendChild(document.createTextNode(String(c)));
	}
}

// A link to one of the dashboard's pages; params are encoded here.
export function pageURL(page, params) {
	const q = new URLSearchParams(params).toString();
	return '/static/' + page + (q ? '?' + q : '');
}

export function link(page, params, ...children) {
	return h('a', { href: pageURL(page, params) }, ...children);
}

// The page's own query parameter, or null.
export function param(name) {
	return new URLSearchParams(location.search).get(name);
}

// GET an API path; resolves to the parsed JSON, or throws an Error whose
// message is the API's own {"error": ...} text with the status.
export async function getJSON(path) {
	const res = await fetch(API + path, { headers: { Accept: 'application/json' } });
	let body = null;
	try {
		body = await res.json();
	} catch (e) {
		body = null;
	}
	if (!res.ok) {
		const why = body && typeof body.error === 'string' ? body.error : res.statusText;
		throw new Error(`${res.status}: ${why} (${API}${path})`);
	}
	return body;
}

// A gain (a fraction) as a percentage with three decimals; null is "n/a".
export function pct(g) {
	if (g === null || g === undefined || !Number.isFinite(g))
		return 'n/a';
	return (g * 100).toFixed(3) + '%';
}

// A measured value: as stored, up to 6 significant digits.
export function num(v) {
	if (v === null || v === undefined || !Number.isFinite(v))
		return 'n/a';
	return String(Number(v.toPrecision(6)));
}

// A hash in monospace: whole, or its first n digits with the whole hash in
// the tooltip.
export function hash(full, n) {
	if (!full)
		return h('span', { class: 'muted' }, 'none');
	if (!n || full.length <= n)
		return h('code', { class: 'hash' }, full);
	return h('code', { class: 'hash', title: full }, full.slice(0, n));
}

// UTC time as "2026-11-04 10:00:00Z"; the stored text in the title.
export function when(t) {
	if (!t)
		return h('span', { class: 'muted' }, 'never');
	const m = /^(\d{4}-\d\d-\d\d)T(\d\d:\d\d:\d\d)/.exec(t);
	return h('time', { datetime: t, title: t }, m ? `${m[1]} ${m[2]}Z` : t);
}

// A time as how long ago it was, by the browser's clock ("4 min ago"); the
// stored text in the title. null is "never".
export function ago(t) {
	if (!t)
		return h('span', { class: 'muted' }, 'never');
	const ms = Date.now() - Date.parse(t);
	if (!Number.isFinite(ms))
		return when(t);
	const s = Math.round(ms / 1000);
	const text = s < 0 ? 'in the future (clocks differ)'
		: s < 45 ? 'just now'
		: s < 90 * 60 ? `${Math.max(1, Math.round(s / 60))} min ago`
		: s < 36 * 3600 ? `${Math.round(s / 3600)} h ago`
		: `${Math.round(s / 86400)} days ago`;
	return h('time', { datetime: t, title: t }, text);
}

const VERDICT_MARK = {
	faster: '\u25b2',      // up triangle
	slower: '\u25bc',      // down triangle
	unchanged: '=',
	unresolved: '?',
	invalid: '\u2717',     // ballot x
};

// A verdict as text with a mark, coloured by class; the words carry the
// meaning, the colour only helps.
export function verdict(v) {
	if (!v)
		return h('span', { class: 'verdict v-none' }, 'no verdict');
	const known = Object.hasOwn(VERDICT_MARK, v);
	return h('span', { class: 'verdict ' + (known ? 'v-' + v : 'v-none') },
		(known ? VERDICT_MARK[v] + ' ' : '') + v);
}

// An A/A comparison's verdict (one build against itself), in the words of
// the pull-request comment (runner_aa_verdict, docs/comment.md): a sample
// of the false verdict rate, never a change, so never "faster" or "slower".
export function aaWords(v) {
	if (v === 'faster' || v === 'slower')
		return 'A/A: a false verdict (calibration sample, not a change)';
	if (v === 'unchanged' || v === 'unresolved')
		return `A/A: ${v} (calibration sample)`;
	if (v === 'invalid')
		return 'A/A: invalid';
	return 'A/A';
}

// Who made a comparison that names no head, in words: made_by is the API's
// ('calibration': the agent's A/A of one build against itself; 'pair': by
// hand with perfd pair; 'job': an agent's job this server has not stored;
// null when not known), kind the comparison's ('aa' for an A/A).
export function madeByWords(madeBy, kind) {
	if (madeBy === 'calibration')
		return 'the agent\'s calibration A/A';
	if (madeBy === 'job')
		return kind === 'aa' ? 'an A/A of an agent\'s job not stored here' : 'an agent\'s job not stored here';
	if (madeBy === 'pair')
		return kind === 'aa' ? 'an A/A run by hand with perfd pair' : 'by hand with perfd pair';
	return kind === 'aa' ? 'an A/A of unknown origin' : 'unknown origin';
}

// A verdict by the comparison's kind: an A/A's in aaWords, marked apart.
export function verdictOf(kind, v) {
	if (kind !== 'aa')
		return verdict(v);
	return h('span', { class: 'verdict v-aa', title: v ? `the rule said ${v}` : null }, aaWords(v));
}

// A job state in the same manner.
export function state(s) {
	const cls = s === 'done' ? 's-done' : s === 'failed' ? 's-failed' : 's-other';
	return h('span', { class: 'state ' + cls }, s || 'unknown');
}

// Where a host stands with a pull head (GET /api/v1/pulls): the word,
// coloured by how it reads.
const HOST_STATE_CLASS = {
	done: 's-done', failed: 's-failed', quarantined: 's-failed', held: 's-failed', silent: 's-warn',
};

export function hostState(s) {
	return h('span', { class: 'state ' + (HOST_STATE_CLASS[s] || 's-other') }, s || 'unknown');
}

// A table: headers is a list of strings (or [text, class]); rows a list of
// arrays of cells (each a node, a string or [content, class]).
export function table(headers, rows, cls) {
	const cellOf = (tag, c) => {
		if (Array.isArray(c) && c.length === 2 && typeof c[1] === 'string' && c[1].startsWith('.'))
			return h(tag, { class: c[1].slice(1) }, c[0]);
		return h(tag, {}, c);
	};
	return h('table', { class: cls || null },
		h('thead', {}, h('tr', {}, headers.map((x) => cellOf('th', x)))),
		h('tbody', {}, rows.map((r) => h('tr', {}, r.map((c) => cellOf('td', c))))));
}

// A definition list of facts: pairs of [name, value].
export function facts(pairs) {
	return h('table', { class: 'facts' },
		h('tbody', {}, pairs.map(([k, v]) => h('tr', {}, h('th', {}, k), h('td', {}, v)))));
}

// Replaces the contents of the element with id by children.
export function fill(id, ...children) {
	const e = document.getElementById(id);
	e.replaceChildren();
	append(e, children);
	return e;
}

// Shows a failure in the page's #error box (and leaves the rest alone).
export function fail(err) {
	const box = document.getElementById('error');
	box.hidden = false;
	box.replaceChildren(document.createTextNode(String(err && err.message ? err.message : err)));
	document.body.dataset.state = 'error';
}

// Marks the page as drawn, for tests and for people: data-state="ready".
export function ready() {
	if (document.body.dataset.state !== 'error')
		document.body.dataset.state = 'ready';
}

// The device and driver named by a fingerprint; device null when the
// fingerprint is the host part alone, and note then what it says of why
// (an agent without a host profile that found no Vulkan device).
export function deviceOf(fp) {
	if (!fp || typeof fp !== 'object')
		return { device: null, driver: null, kernel: null, note: null };
	const d = Array.isArray(fp.devices) && fp.devices.length ? fp.devices[0] : null;
	const kernel = fp.host && fp.host.kernel_release ? fp.host.kernel_release : null;
	const note = typeof fp.note === 'string' && fp.note ? fp.note : null;
	if (!d)
		return { device: null, driver: null, kernel, note };
	const drv = [d.driver_name, d.driver_info].filter((x) => x).join(' ');
	return { device: d.name || null, driver: drv || null, kernel, note };
}

// The leaves of a JSON value as "path": value, for naming what changed
// between two fingerprints.
export function flatten(v, prefix, out) {
	out = out || {};
	if (v !== null && typeof v === 'object') {
		for (const [k, x] of Object.entries(v))
			flatten(x, prefix ? `${prefix}${Array.isArray(v) ? `[${k}]` : '.' + k}` : k, out);
	} else {
		out[prefix || '(value)'] = v;
	}
	return out;
}

// The differences between two fingerprints, as lines "path: a -> b".
export function fingerprintDiff(a, b) {
	const fa = flatten(a, ''), fb = flatten(b, '');
	const keys = [...new Set([...Object.keys(fa), ...Object.keys(fb)])].sort();
	const out = [];
	for (const k of keys) {
		if (fa[k] !== fb[k])
			out.push(`${k}: ${JSON.stringify(fa[k] ?? null)} \u2192 ${JSON.stringify(fb[k] ?? null)}`);
	}
	return out;
}
