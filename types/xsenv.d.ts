// @sap/xsenv ships no types; this declares the one function the service uses.
declare module '@sap/xsenv' {
  export interface ServiceEntry {
    name: string;
    label: string;
    plan?: string;
    tags?: string[];
    credentials: Record<string, unknown>;
  }
  /** Bound services (VCAP_SERVICES, or mounted secrets on Kubernetes) matching every given property. */
  export function filterServices(query: { label?: string; name?: string; tag?: string }): ServiceEntry[];
}
