/** A promise the test opens when it chooses: holds a scripted S/4HANA read until other work has happened. */
export interface Gate {
  opened: Promise<void>;
  open(): void;
}

export function gate(): Gate {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}
