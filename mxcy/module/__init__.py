"""``mx.mod``: BaseModule and its modules -- Module (one symbol, one executor per context),
BucketingModule, SequentialModule, PythonModule and PythonLossModule."""
from mxcy.module.base_module import BaseModule
from mxcy.module.bucketing_module import BucketingModule
from mxcy.module.executor_group import DataParallelExecutorGroup
from mxcy.module.module import Module
from mxcy.module.python_module import PythonLossModule, PythonModule
from mxcy.module.sequential_module import SequentialModule

__all__ = ['BaseModule', 'BucketingModule', 'DataParallelExecutorGroup', 'Module',
           'PythonLossModule', 'PythonModule', 'SequentialModule']
