import 'uplot/dist/uPlot.min.css';
import './styles.css';
import { byId } from './dom.js';
import { startDashboard } from './shell.js';

startDashboard(byId('app'));
