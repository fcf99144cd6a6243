/** The part of autocannon's programmatic API that measureThroughput uses (the package ships no types). */
declare module 'autocannon' {
  interface Options {
    url: string;
    connections?: number;
    duration?: number;
    method?: string;
    timeout?: number;
    /** Worker threads to run the load in (default 0: this thread). */
    workers?: number;
  }
  interface Histogram {
    average: number;
    p50: number;
    p99: number;
  }
  interface Result {
    latency: Histogram;
    /** Per-second samples; `total` is the number of completed requests. */
    requests: Histogram & { total: number };
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
  }
  function autocannon(options: Options): Promise<Result>;
  export default autocannon;
}
