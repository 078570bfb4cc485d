import { guideGlobalSetup } from './support/environment.js';

export default guideGlobalSetup();
