export { WHAT_EACH_CAPABILITY_COVERS, type Capabilities } from '../schemas/limits.ts';
