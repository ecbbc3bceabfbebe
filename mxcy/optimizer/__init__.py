"""``mx.optimizer``: optimizers created by name, and the Updater that applies them
(MXNet 1.x API). See ``mxcy.optimizer.optimizer`` for the shared contract; each family
lives in its own module and states its update rule in its docstring.
"""
from mxcy.optimizer.optimizer import (Optimizer, Updater, alias, create, get_updater,
                                      register)
from mxcy.optimizer.sgd import SGD, ccSGD
from mxcy.optimizer.nag import NAG
from mxcy.optimizer.adam import Adam
from mxcy.optimizer.adagrad import AdaGrad, GroupAdaGrad
from mxcy.optimizer.adamax import Adamax, Nadam
from mxcy.optimizer.ftml import FTML
from mxcy.optimizer.sgld import DCASGD, SGLD, Test
from mxcy.optimizer.lars import LARS, LBSGD
from mxcy.optimizer.rmsprop import RMSProp
from mxcy.optimizer.adadelta import AdaDelta
from mxcy.optimizer.ftrl import Ftrl
from mxcy.optimizer.signum import Signum
from mxcy.optimizer.lamb import LAMB

__all__ = ['Optimizer', 'Updater', 'get_updater', 'register', 'alias', 'create',
           'SGD', 'ccSGD', 'NAG', 'Adam', 'AdaGrad', 'RMSProp', 'AdaDelta', 'Ftrl', 'Signum',
           'LAMB',
           'GroupAdaGrad', 'Adamax', 'Nadam', 'FTML', 'SGLD', 'DCASGD', 'Test', 'LARS',
           'LBSGD']
