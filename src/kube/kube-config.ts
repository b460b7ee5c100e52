// Where the service finds its Kubernetes API: the default loading of @kubernetes/client-node
// (`KUBECONFIG`, then ~/.kube/config, then the in-cluster service account), or one kubeconfig file.
// Finding none is an error at start: the library's last resort, http://localhost:8080 without
// credentials, would only fail later, over and over, in words that do not say what is missing.
import { KubeConfig } from '@kubernetes/client-node';

export interface KubeConfigForOptions {
  /** A kubeconfig file to load instead of the default loading. */
  kubeconfigPath?: string;
  /** A context of that kubeconfig other than its current one. */
  context?: string;
}

/** No usable Kubernetes configuration; the message says what was looked for and what to do. */
export class KubeConfigError extends Error {
  override readonly name = 'KubeConfigError';
}

export function kubeConfigFor(options: KubeConfigForOptions = {}): KubeConfig {
  const kubeConfig = new KubeConfig();
  // The file the library reads first (only for the error's words).
  const from = options.kubeconfigPath ?? (process.env.KUBECONFIG || undefined)?.split(':')[0];
  try {
    if (options.kubeconfigPath) kubeConfig.loadFromFile(options.kubeconfigPath);
    else kubeConfig.loadFromDefault();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const what = code === undefined ? String(error instanceof Error ? error.message : error).split('\n')[0] : code;
    throw new KubeConfigError(`cannot load the kubeconfig ${from ? JSON.stringify(from) : '~/.kube/config'} (${what})`);
  }
  if (isLastResort(kubeConfig)) {
    throw new KubeConfigError(
      'no Kubernetes API configured: KUBECONFIG is not set, there is no ~/.kube/config, and this is no pod with a service account; ' +
        'set KUBECONFIG to a kubeconfig file, or run in a pod (deploy/README.md)',
    );
  }
  if (options.context) kubeConfig.setCurrentContext(options.context);
  if (!kubeConfig.getCurrentCluster()) {
    throw new KubeConfigError(`the kubeconfig${from ? ` ${JSON.stringify(from)}` : ''} names no current cluster: set its current-context`);
  }
  return kubeConfig;
}

/** What loadFromDefault() falls back to when it found nothing: one cluster at http://localhost:8080, no user. */
function isLastResort(kubeConfig: KubeConfig): boolean {
  const [cluster] = kubeConfig.clusters;
  const [user] = kubeConfig.users;
  return (
    kubeConfig.currentContext === 'loaded-context' &&
    kubeConfig.clusters.length === 1 &&
    cluster?.name === 'cluster' &&
    cluster.server === 'http://localhost:8080' &&
    kubeConfig.users.length === 1 &&
    user?.name === 'user' &&
    user.token === undefined
  );
}
