// The page is a row of tabs, one panel per method (optimal transport now; kernels, OTKE, screening later).
// Adding a method means adding one PanelDef to main.ts. Panels are mounted on first view, so a page with many
// methods only builds the DOM (and starts the computations) of those actually opened.

import { h } from './dom';
import type { SolverClient } from './solver_client';

export interface PanelContext {
  solver: SolverClient;
}

export interface PanelDef {
  /** Used in element ids and as the URL hash (#ot), so a panel can be linked to directly. */
  id: string;
  title: string;
  mount(container: HTMLElement, ctx: PanelContext): void;
}

export function mountPanels(tabList: HTMLElement, host: HTMLElement, defs: PanelDef[], ctx: PanelContext): void {
  const mounted = new Set<string>();
  const tabs = defs.map((def) =>
    h(
      'button',
      {
        type: 'button',
        role: 'tab',
        id: `tab-${def.id}`,
        'aria-controls': `panel-${def.id}`,
        'aria-selected': 'false',
        tabindex: -1,
        'data-testid': `tab-${def.id}`,
      },
      def.title,
    ),
  );
  const sections = defs.map((def) =>
    h('section', {
      role: 'tabpanel',
      id: `panel-${def.id}`,
      'aria-labelledby': `tab-${def.id}`,
      class: 'panel',
      hidden: true,
    }),
  );
  tabList.append(...tabs);
  host.append(...sections);

  const select = (index: number, focus: boolean): void => {
    defs.forEach((def, i) => {
      const active = i === index;
      tabs[i].setAttribute('aria-selected', String(active));
      tabs[i].tabIndex = active ? 0 : -1;
      sections[i].hidden = !active;
      if (active && !mounted.has(def.id)) {
        mounted.add(def.id);
        def.mount(sections[i], ctx);
      }
    });
    if (focus) tabs[index].focus();
    history.replaceState(null, '', `#${defs[index].id}`);
  };

  tabs.forEach((tab, i) => {
    tab.addEventListener('click', () => select(i, false));
    // WAI-ARIA tabs pattern: arrows move between tabs, Home/End jump to the ends.
    tab.addEventListener('keydown', (event) => {
      const last = defs.length - 1;
      const to =
        event.key === 'ArrowRight'
          ? i === last
            ? 0
            : i + 1
          : event.key === 'ArrowLeft'
            ? i === 0
              ? last
              : i - 1
            : event.key === 'Home'
              ? 0
              : event.key === 'End'
                ? last
                : -1;
      if (to < 0) return;
      event.preventDefault();
      select(to, true);
    });
  });

  const fromHash = defs.findIndex((def) => `#${def.id}` === location.hash);
  select(fromHash >= 0 ? fromHash : 0, false);
}
