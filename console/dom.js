// Builds elements from data with text nodes only: event bodies and reasons come from outside and are never
// read as HTML.

/** h('td', { class: 'when' }, 'text', child…): attributes as strings, children as nodes or text. */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value !== undefined && value !== null && value !== false) element.setAttribute(name, String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

export function when(value) {
  if (value === null || value === undefined) return '–';
  return new Date(value)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d{3}Z$/, ' UTC');
}

export function table(headings, rows) {
  return h(
    'table',
    {},
    h('thead', {}, h('tr', {}, ...headings.map((heading) => h('th', {}, heading)))),
    h('tbody', {}, ...rows),
  );
}

export function tag(name) {
  return h('span', { class: `tag tag-${name}` }, name.replaceAll('_', ' '));
}
